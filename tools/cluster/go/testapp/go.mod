module faultkit.local/cluster/testapp

go 1.24.0
