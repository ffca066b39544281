# shellcheck shell=bash
# The real node of one local cluster (sourced by up.sh): its network namespace and veth pair,
# and the configs of containerd, the CNI bridge, kubelet and kube-proxy, which all run inside
# that netns. Nothing here touches the host's own iptables or forwarding settings: the host only
# gets the veth end ($HOST_IP) and a route to the pod CIDR through the node end ($NODE_IP).

# make_netns — netns + veth pair + addresses + route; sysctls set inside the netns only.
make_netns() {
  local ns="$NODE_NETNS" nsx
  ip netns add "$ns"
  nsx=(ip netns exec "$ns")
  ip link add "$HOST_VETH" type veth peer name "$NODE_VETH_TMP"
  ip link set "$NODE_VETH_TMP" netns "$ns"
  "${nsx[@]}" ip link set "$NODE_VETH_TMP" name eth0
  ip addr add "$HOST_IP/30" dev "$HOST_VETH"
  ip link set "$HOST_VETH" up
  "${nsx[@]}" ip addr add "$NODE_IP/30" dev eth0
  "${nsx[@]}" ip link set eth0 up
  "${nsx[@]}" ip link set lo up
  # The node's only way out is the host veth end: the apiserver is there, nothing else is.
  "${nsx[@]}" ip route add default via "$HOST_IP"
  ip route add "$POD_CIDR" via "$NODE_IP" dev "$HOST_VETH"
  # Inside the netns: route between eth0 and the pod bridge, and let pod->Service->pod traffic
  # on one bridge pass through kube-proxy's iptables rules (br_netfilter is per netns).
  "${nsx[@]}" sysctl -qw net.ipv4.ip_forward=1
  "${nsx[@]}" sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null ||
    log "warning: br_netfilter unavailable; pod->Service->pod on the same node may not work"
}

# write_node_configs PAUSE_REF — containerd, CNI, kubelet and kube-proxy configs.
write_node_configs() {
  local pause_ref="$1" cd="$STATE_DIR/containerd"
  mkdir -p "$cd/root" "$cd/state" "$STATE_DIR/runc" "$STATE_DIR/cni/net.d" "$STATE_DIR/cni/ipam" \
    "$STATE_DIR/kubelet" "$STATE_DIR/pod-logs"
  cat >"$cd/config.toml" <<EOF
version = 2
root = "$cd/root"
state = "$cd/state"
# Plugins this node never uses: skipping them keeps startup quick and quiet.
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$CONTAINERD_SOCK"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_ref"
  # runc cannot lower oom_score_adj without CAP_SYS_RESOURCE, which this machine lacks.
  restrict_oom_score_adj = true
  # Pod netns files under our state dir, not in the host's /run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$STATE_DIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE_DIR/cni/net.d"
    max_conf_num = 1

[plugins."io.containerd.internal.v1.opt"]
  path = "$cd/opt"
EOF
  cat >"$STATE_DIR/cni/net.d/10-cronscale.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE_DIR/cni/ipam",
        "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$POD_GW" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "loopback" }
  ]
}
EOF
  # No upstream resolver: pods resolve only through the cluster DNS (an add-on), never outside.
  echo "# cronscale local node: no upstream DNS on purpose" >"$STATE_DIR/resolv.conf"
  cat >"$STATE_DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: { enabled: true }
  webhook: { enabled: false }
  x509: { clientCAFile: $STATE_DIR/pki/ca.crt }
authorization: { mode: AlwaysAllow }
# This machine runs cgroup v1 without systemd as init.
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
failCgroupV1: false
failSwapOn: false
clusterDNS: [$CLUSTER_DNS_IP]
clusterDomain: cluster.local
resolvConf: $STATE_DIR/resolv.conf
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
podLogsDir: $STATE_DIR/pod-logs
maxPods: 200
serializeImagePulls: false
# A test machine's disk is not the production question: evict only when really full.
evictionHard: { memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1% }
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
shutdownGracePeriod: 0s
EOF
  cat >"$STATE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: { kubeconfig: $STATE_DIR/pki/kube-proxy.kubeconfig }
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
# Loopback of the node netns, explicit so nothing binds elsewhere.
bindAddress: $NODE_IP
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# Leave conntrack sysctls alone (they are not ours to change on a shared kernel).
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
EOF
}

# prepare_cgroups — the cluster's cgroup root on every hierarchy (kubelet requires it to exist).
prepare_cgroups() {
  local m
  for m in $(awk '$3 == "cgroup" { print $2 }' /proc/mounts); do
    mkdir -p "$m$CGROUP_ROOT"
    # cgroup v1 cpuset children start empty; give ours the parent's cpus and mems.
    if [[ -f "$m/cpuset.cpus" ]]; then
      cat "$m/cpuset.cpus" >"$m$CGROUP_ROOT/cpuset.cpus"
      cat "$m/cpuset.mems" >"$m$CGROUP_ROOT/cpuset.mems"
    fi
  done
}
