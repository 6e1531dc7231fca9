module faultkit.local/cluster/pause

go 1.24.0
