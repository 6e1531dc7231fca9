"""The node agent: how the kubernetes platform carries out direct actions, the way chaos tools do.

A DaemonSet in a namespace of its own (created, recorded and deleted by faultkit, never the app's),
privileged with the host's PID namespace, runs an image faultkit builds locally (image.py) from the
debootstrap base with the scripts in payload/. faultkit calls its commands through the API server's
exec (daemon.py); the commands enter the target container's namespaces and cgroups (payload/nodeagent.py).
"""
