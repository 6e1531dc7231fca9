"""Certificates, service-account keys and kubeconfigs of the cluster, made fresh in the state folder.

One CA signs everything (a test cluster has no need for the separate etcd and front-proxy CAs of
kubeadm). P-256 keys: quick to make on a loaded machine and accepted by every component.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .layout import APISERVER_PORT, CLUSTER_DOMAIN, KUBERNETES_SERVICE_IP, NODE_NAME

VALIDITY = datetime.timedelta(days=30)


@dataclass(frozen=True)
class Client:
    """A client identity: the file stem, its user name and groups (the authorizers read them)."""

    stem: str
    user: str
    groups: tuple[str, ...] = ()


CLIENTS = (
    Client("admin", "faultkit-admin", ("system:masters",)),
    Client("apiserver-kubelet-client", "kube-apiserver-kubelet-client", ("system:masters",)),
    Client("controller-manager", "system:kube-controller-manager"),
    Client("scheduler", "system:kube-scheduler"),
    Client("kubelet", f"system:node:{NODE_NAME}", ("system:nodes",)),
    Client("kube-proxy", "system:kube-proxy"),
)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def _name(common: str, groups: tuple[str, ...] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
    return x509.Name(attrs + [x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _sign(ca_key: ec.EllipticCurvePrivateKey, ca_name: x509.Name, subject: x509.Name,
          key: ec.EllipticCurvePrivateKey, usages: list[x509.ObjectIdentifier],
          sans: list[x509.GeneralName] | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + VALIDITY)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
               .add_extension(x509.ExtendedKeyUsage(usages), critical=False))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def make_pki(pki: Path, node_ip: str) -> None:
    """Write ca, apiserver and kubelet serving pairs, one client pair per CLIENTS entry, and sa keys."""
    pki.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("faultkit-cluster-ca")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + VALIDITY)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    _write_key(pki / "ca.key", ca_key)
    (pki / "ca.crt").write_bytes(_pem(ca))

    dns = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", f"kubernetes.default.svc.{CLUSTER_DOMAIN}",
           "localhost", NODE_NAME]
    ips = ["127.0.0.1", node_ip, KUBERNETES_SERVICE_IP]
    sans: list[x509.GeneralName] = [x509.DNSName(name) for name in dns]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    for stem, subject in (("apiserver", "kube-apiserver"), ("kubelet-serving", f"system:node:{NODE_NAME}")):
        key = ec.generate_private_key(ec.SECP256R1())
        _write_key(pki / f"{stem}.key", key)
        (pki / f"{stem}.crt").write_bytes(_pem(_sign(ca_key, ca_name, _name(subject), key,
                                                     [ExtendedKeyUsageOID.SERVER_AUTH], sans)))
    for client in CLIENTS:
        key = ec.generate_private_key(ec.SECP256R1())
        _write_key(pki / f"{client.stem}.key", key)
        (pki / f"{client.stem}.crt").write_bytes(_pem(_sign(ca_key, ca_name, _name(client.user, client.groups), key,
                                                            [ExtendedKeyUsageOID.CLIENT_AUTH])))
    sa_key = ec.generate_private_key(ec.SECP256R1())
    _write_key(pki / "sa.key", sa_key)
    (pki / "sa.pub").write_bytes(sa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                  serialization.PublicFormat.SubjectPublicKeyInfo))


def write_kubeconfig(path: Path, pki: Path, stem: str, server_ip: str) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "faultkit", "cluster": {"server": f"https://{server_ip}:{APISERVER_PORT}",
                                                      "certificate-authority": str(pki / "ca.crt")}}],
        "users": [{"name": stem, "user": {"client-certificate": str(pki / f"{stem}.crt"),
                                          "client-key": str(pki / f"{stem}.key")}}],
        "contexts": [{"name": "faultkit", "context": {"cluster": "faultkit", "user": stem}}],
        "current-context": "faultkit",
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
