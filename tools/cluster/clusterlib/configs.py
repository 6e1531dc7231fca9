"""Configuration files and command lines of every component, written into the state folder."""

from __future__ import annotations

import json

import yaml

from .layout import (
    APISERVER_PORT,
    BRIDGE,
    CLUSTER_DOMAIN,
    CLUSTER_POD_CIDR,
    CNI_NETWORK,
    DNS_SERVICE_IP,
    ETCD_CLIENT_PORT,
    ETCD_PEER_PORT,
    NODE_NAME,
    NODE_POD_CIDR,
    PAUSE_IMAGE,
    SERVICE_CIDR,
    Layout,
)
from .pki import write_kubeconfig

CNI_BIN_DIR = "/usr/lib/cni"  # Debian's containernetworking-plugins
RUNC = "/usr/sbin/runc"


def containerd_toml(layout: Layout) -> str:
    root = layout.state / "containerd"
    # Everything under the state folder: root, state, socket, runc's own root, netns mounts; the
    # plugins that would write elsewhere (NRI's socket, /opt/containerd) are off or moved.
    return f"""version = 3
root = "{root}/root"
state = "{root}/state"
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.snapshotter.v1.devmapper",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{layout.containerd_socket}"

[ttrpc]
  address = "{layout.containerd_socket}.ttrpc"

[plugins.'io.containerd.internal.v1.opt']
  path = "{root}/opt"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "{PAUSE_IMAGE}"

[plugins.'io.containerd.cri.v1.runtime']
  netns_mounts_under_state_dir = true
  # Here root lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj (the sandbox asks for -998)
  # and fails with "can't get final child's PID from pipe"; clamp to containerd's own score.
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "{RUNC}"
        Root = "{root}/runc"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["{CNI_BIN_DIR}"]
    conf_dir = "{layout.state}/cni/net.d"

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
"""


def cni_conflist(layout: Layout) -> dict[str, object]:
    return {
        "cniVersion": "1.0.0",
        "name": CNI_NETWORK,
        "plugins": [{
            "type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": True, "hairpinMode": True,
            "ipam": {"type": "host-local", "ranges": [[{"subnet": NODE_POD_CIDR}]],
                     "routes": [{"dst": "0.0.0.0/0"}], "dataDir": str(layout.state / "cni" / "ipam")},
        }],
    }


def kubelet_config(layout: Layout) -> dict[str, object]:
    pki = layout.pki
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                           "x509": {"clientCAFile": str(pki / "ca.crt")}},
        "authorization": {"mode": "Webhook"},
        "cgroupDriver": "cgroupfs",
        # This machine has cgroup v1; 1.34 still accepts it by default, said here so it stays explicit.
        "failCgroupV1": False,
        "failSwapOn": False,
        "clusterDNS": [DNS_SERVICE_IP],
        "clusterDomain": CLUSTER_DOMAIN,
        "containerRuntimeEndpoint": f"unix://{layout.containerd_socket}",
        "tlsCertFile": str(pki / "kubelet-serving.crt"),
        "tlsPrivateKeyFile": str(pki / "kubelet-serving.key"),
        "podLogsDir": str(layout.state / "pod-logs"),
        "healthzBindAddress": "127.0.0.1",
        "readOnlyPort": 0,
        "serializeImagePulls": False,
        "resolvConf": "/etc/resolv.conf",
        "registerNode": True,
        # The disk is shared with other work: evict only when it is really full.
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "2%", "imagefs.available": "2%",
                         "nodefs.inodesFree": "2%"},
        "imageGCHighThresholdPercent": 99,
        "imageGCLowThresholdPercent": 98,
        "nodeStatusUpdateFrequency": "10s",
        "syncFrequency": "10s",
    }


def kube_proxy_config(layout: Layout) -> dict[str, object]:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clusterCIDR": CLUSTER_POD_CIDR,
        "hostnameOverride": NODE_NAME,
        "clientConnection": {"kubeconfig": str(layout.state / "kube-proxy.kubeconfig")},
        "metricsBindAddress": "127.0.0.1:10249",
        "healthzBindAddress": "127.0.0.1:10256",
        # Leave the host's conntrack sysctls alone (0 = do not set) and skip route_localnet.
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        "iptables": {"localhostNodePorts": False},
    }


def write_all(layout: Layout, node_ip: str) -> None:
    state = layout.state
    for stem in ("admin", "controller-manager", "scheduler", "kubelet", "kube-proxy"):
        target = layout.admin_kubeconfig if stem == "admin" else state / f"{stem}.kubeconfig"
        write_kubeconfig(target, layout.pki, stem, node_ip)
    (state / "containerd").mkdir(parents=True, exist_ok=True)
    (state / "containerd" / "config.toml").write_text(containerd_toml(layout))
    (state / "cni" / "net.d").mkdir(parents=True, exist_ok=True)
    (state / "cni" / "net.d" / "10-faultkit.conflist").write_text(json.dumps(cni_conflist(layout), indent=2))
    (state / "kubelet.yaml").write_text(yaml.safe_dump(kubelet_config(layout), sort_keys=False))
    (state / "kube-proxy.yaml").write_text(yaml.safe_dump(kube_proxy_config(layout), sort_keys=False))
    for folder in ("kubelet", "pod-logs", "etcd", "logs", "run"):
        (state / folder).mkdir(parents=True, exist_ok=True)


def command(name: str, layout: Layout, node_ip: str) -> list[str]:
    """The argv of one component."""
    bin_, pki, state = layout.bin, layout.pki, layout.state
    etcd_url = f"http://127.0.0.1:{ETCD_CLIENT_PORT}"
    if name == "etcd":
        # Loopback only and plain HTTP: only this machine's API server talks to it.
        return [str(bin_ / "etcd"), "--name", NODE_NAME, "--data-dir", str(state / "etcd"),
                "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
                "--listen-peer-urls", f"http://127.0.0.1:{ETCD_PEER_PORT}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{ETCD_PEER_PORT}",
                "--initial-cluster", f"{NODE_NAME}=http://127.0.0.1:{ETCD_PEER_PORT}",
                "--log-level", "warn", "--quota-backend-bytes", str(2 << 30)]
    if name == "kube-apiserver":
        return [str(bin_ / "kube-apiserver"), "--etcd-servers", etcd_url,
                "--advertise-address", node_ip, "--secure-port", str(APISERVER_PORT),
                "--service-cluster-ip-range", SERVICE_CIDR, "--authorization-mode", "Node,RBAC",
                "--client-ca-file", str(pki / "ca.crt"),
                "--tls-cert-file", str(pki / "apiserver.crt"), "--tls-private-key-file", str(pki / "apiserver.key"),
                "--kubelet-client-certificate", str(pki / "apiserver-kubelet-client.crt"),
                "--kubelet-client-key", str(pki / "apiserver-kubelet-client.key"),
                "--kubelet-certificate-authority", str(pki / "ca.crt"),
                "--kubelet-preferred-address-types", "InternalIP",
                "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file", str(pki / "sa.pub"),
                "--service-account-signing-key-file", str(pki / "sa.key"),
                "--enable-admission-plugins", "NodeRestriction", "--allow-privileged=true",
                "--profiling=false", "--v=1"]
    if name == "kube-controller-manager":
        kubeconfig = str(state / "controller-manager.kubeconfig")
        return [str(bin_ / "kube-controller-manager"), "--kubeconfig", kubeconfig,
                "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
                "--bind-address", "127.0.0.1", "--leader-elect=false", "--use-service-account-credentials",
                "--allocate-node-cidrs", "--cluster-cidr", CLUSTER_POD_CIDR, "--node-cidr-mask-size", "24",
                "--service-cluster-ip-range", SERVICE_CIDR, "--root-ca-file", str(pki / "ca.crt"),
                "--service-account-private-key-file", str(pki / "sa.key"),
                "--cluster-signing-cert-file", str(pki / "ca.crt"), "--cluster-signing-key-file", str(pki / "ca.key"),
                "--profiling=false", "--v=1"]
    if name == "kube-scheduler":
        kubeconfig = str(state / "scheduler.kubeconfig")
        return [str(bin_ / "kube-scheduler"), "--kubeconfig", kubeconfig,
                "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
                "--bind-address", "127.0.0.1", "--leader-elect=false", "--profiling=false", "--v=1"]
    if name == "containerd":
        return [str(bin_ / "containerd"), "--config", str(state / "containerd" / "config.toml"),
                "--log-level", "warn"]
    if name == "kubelet":
        return [str(bin_ / "kubelet"), "--config", str(state / "kubelet.yaml"),
                "--kubeconfig", str(state / "kubelet.kubeconfig"), "--root-dir", str(state / "kubelet"),
                "--hostname-override", NODE_NAME, "--node-ip", node_ip, "--v=1"]
    if name == "kube-proxy":
        return [str(bin_ / "kube-proxy"), "--config", str(state / "kube-proxy.yaml"), "--v=1"]
    raise ValueError(f"unknown component {name}")
