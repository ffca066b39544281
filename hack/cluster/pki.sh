# shellcheck shell=bash
# Certificates, service-account keys and kubeconfigs of one local cluster (sourced by up.sh).
# Everything is generated fresh per cluster with openssl: ECDSA P-256 keys (fast to make),
# one cluster CA, one front-proxy CA (aggregated APIs such as metrics-server need it).

# _key FILE — a new P-256 private key.
_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# _ca NAME CN — a self-signed CA: $PKI/NAME.{key,crt}.
_ca() {
  _key "$PKI/$1.key"
  openssl req -x509 -new -key "$PKI/$1.key" -subj "/CN=$2" -days 3650 -out "$PKI/$1.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
}

# _leaf CA NAME SUBJECT USAGE [SANS] — $PKI/NAME.{key,crt} signed by $PKI/CA; USAGE is
# serverAuth, clientAuth or both.
_leaf() {
  local ca="$1" name="$2" subj="$3" usage="$4" sans="${5:-}" ext
  ext="$(mktemp)"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    if [[ -n "$sans" ]]; then echo "subjectAltName=$sans"; fi
  } >"$ext"
  _key "$PKI/$name.key"
  openssl req -new -key "$PKI/$name.key" -subj "$subj" 2>/dev/null |
    openssl x509 -req -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial -days 3650 \
      -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$ext"
}

# _kubeconfig FILE CERTNAME — a kubeconfig that authenticates with $PKI/CERTNAME.
_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $CLUSTER_NAME
  cluster:
    server: $APISERVER_URL
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(base64 -w0 <"$PKI/$2.crt")
    client-key-data: $(base64 -w0 <"$PKI/$2.key")
contexts:
- name: $CLUSTER_NAME
  context:
    cluster: $CLUSTER_NAME
    user: $2
current-context: $CLUSTER_NAME
EOF
  chmod 600 "$1"
}

# make_pki — all certs, keys and kubeconfigs under $STATE_DIR/pki and the admin kubeconfig at
# $STATE_DIR/kubeconfig. Needs APISERVER_URL, HOST_IP, NODE_NAME, KUBERNETES_SVC_IP.
make_pki() {
  PKI="$STATE_DIR/pki"
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  _ca ca "cronscale-$CLUSTER_NAME-ca"
  _ca front-proxy-ca "cronscale-$CLUSTER_NAME-front-proxy-ca"
  local svc="DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  _leaf ca apiserver "/CN=kube-apiserver" serverAuth \
    "DNS:localhost,$svc,IP:127.0.0.1,IP:$HOST_IP,IP:$KUBERNETES_SVC_IP"
  _leaf ca apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  _leaf front-proxy-ca front-proxy-client "/CN=front-proxy-client" clientAuth
  _leaf ca admin "/O=system:masters/CN=cronscale-admin" clientAuth
  _leaf ca controller-manager "/CN=system:kube-controller-manager" clientAuth
  _leaf ca scheduler "/CN=system:kube-scheduler" clientAuth
  _leaf ca kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth
  _leaf ca kube-proxy "/CN=system:kube-proxy" clientAuth
  _leaf ca kwok "/O=system:masters/CN=kwok-controller" clientAuth
  # Service-account token signing key (ES256).
  _key "$PKI/sa.key"
  openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  local who
  for who in admin controller-manager scheduler kubelet kube-proxy kwok; do
    _kubeconfig "$PKI/$who.kubeconfig" "$who"
  done
  cp "$PKI/admin.kubeconfig" "$STATE_DIR/kubeconfig"
  chmod 600 "$STATE_DIR/kubeconfig"
}
