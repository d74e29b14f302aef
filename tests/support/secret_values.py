"""Valid ``data`` for every secret type (types-ts secret.ts), with real PEM keys and certificates."""

from __future__ import annotations

import json
from functools import cache
from typing import Any, get_args

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from plinth.kinds.secret.models import SecretType
from tests.support.tls import self_signed_pem


@cache
def tls_pair(common_name: str = "example.com") -> tuple[str, str]:
    """A self-signed certificate and its unencrypted key, as PEM text."""
    cert, key = self_signed_pem(common_name)
    return cert.decode(), key.decode()


@cache
def ed25519_pair(passphrase: str | None = None) -> tuple[str, str]:
    """A private key (encrypted with ``passphrase`` when given) and its public key, as PEM text."""
    key = ed25519.Ed25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase.encode()) if passphrase else serialization.NoEncryption()
    )
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


DOCKER_CONFIG = json.dumps({"auths": {"registry.example.com": {"username": "robot", "password": "hunter2-docker"}}})
GCP_KEY = json.dumps(
    {
        "type": "service_account",
        "project_id": "demo-project",
        "private_key_id": "0123456789abcdef",
        "private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
        "client_email": "robot@demo-project.iam.gserviceaccount.com",
        "client_id": "123456789012345678901",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/robot",
    }
)
AZURE_SDK = json.dumps(
    {
        "subscriptionId": "2b9c5b3e-1f1e-4c3a-9a55-7d1c2b3a4f60",
        "tenantId": "8c3e1a6f-2b2d-4d4e-8f8f-1a2b3c4d5e6f",
        "clientId": "0f0e0d0c-0b0a-4909-8807-060504030201",
        "clientSecret": "azure-client-secret-value",
    }
)
NATS_ACCOUNT_ID = "A" + "B" * 55
NATS_SEED = "SA" + "C" * 56


def valid_data(kind: str) -> Any:
    """A valid ``data`` for secret type ``kind``."""
    cert, key = tls_pair()
    private, public = ed25519_pair()
    return {
        "opaque": {"payload": "aGVsbG8gd29ybGQ=", "encoding": "base64"},
        "tls": {"cert": cert, "key": key, "chain": cert},
        "gcp": GCP_KEY,
        "aws": {"accessKey": "AKIAEXAMPLE123", "secretKey": "aws-secret-value", "roleArn": "arn:aws:iam::1:role/r"},
        "ecr": {
            "accessKey": "AKIAEXAMPLE123",
            "secretKey": "aws-secret-value",
            "repos": ["123456789012.dkr.ecr.us-east-1.amazonaws.com/app"],
        },
        "userpass": {"username": "ada", "password": "correct horse battery staple"},
        "keypair": {"secretKey": private, "publicKey": public},
        "azure-sdk": AZURE_SDK,
        "azure-connector": {"url": "https://connector.example.com/api", "code": "function-code"},
        "docker": DOCKER_CONFIG,
        "dictionary": {"DB_USER": "ada", "DB_PASSWORD": "s3cret", "empty.value": ""},
        "nats-account": {"accountId": NATS_ACCOUNT_ID, "privateKey": NATS_SEED},
    }[kind]


TYPES: tuple[str, ...] = get_args(SecretType)
