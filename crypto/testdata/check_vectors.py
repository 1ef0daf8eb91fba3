#!/usr/bin/env python3
"""Check the s3seal v1 test vectors against docs/FORMAT.md, independently of
the Go code: every value is recomputed here from the spec with
pyca/cryptography (pip install cryptography).

Usage: python3 check_vectors.py [directory holding vectors.json]
"""
import base64
import json
import os
import struct
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SEG = 65536


def pattern(n):
    return bytes(i % 251 for i in range(n))


def b64url(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def check_stream(d, v):
    ct = open(os.path.join(d, v["ciphertext_file"]), "rb").read()
    dek, oid = bytes.fromhex(v["dek"]), bytes.fromhex(v["oid"])
    part, p = v["part"], v["plain_size"]
    nseg = max(1, -(-p // SEG))
    assert len(ct) == p + 28 * nseg, "ciphertext size"
    gcm, out, pos = AESGCM(dek), b"", 0
    for i in range(nseg):
        n = min(SEG, p - i * SEG)
        seg = ct[pos:pos + n + 28]
        pos += n + 28
        final = 1 if i == nseg - 1 else 0
        aad = b"s3seal v1 seg\x00" + oid + struct.pack(">IQB", part, i, final)
        assert aad.hex() == v["aads"][i], "segment AAD %d" % i
        assert seg[:12].hex() == v["nonces"][i], "nonce %d" % i
        out += gcm.decrypt(seg[:12], seg[12:], aad)
    assert pos == len(ct), "trailing bytes"
    assert out == pattern(p), "plaintext"


def check_wrap(v):
    kek, oid, kid, m = bytes.fromhex(v["kek"]), bytes.fromhex(v["oid"]), v["kid"], v["metadata"]
    assert m["s3seal-v"] == "1" and m["s3seal-kid"] == kid
    assert len(m["s3seal-oid"]) == 22 and b64url(m["s3seal-oid"]) == oid
    assert len(m["s3seal-dek"]) == 80
    wrapped = b64url(m["s3seal-dek"])
    wrap_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=oid, info=b"s3seal v1 wrap").derive(kek)
    assert wrap_key.hex() == v["wrap_key"], "wrap key"
    aad = b"s3seal v1 wrap\x00" + bytes([len(kid)]) + kid.encode() + oid
    if "s3seal-mp" in m:
        assert m["s3seal-mp"] == "1" and "s3seal-size" not in m and "s3seal-md5" not in m
        aad += b"M"
    else:
        aad += b"S" + struct.pack(">Q", int(m["s3seal-size"])) + bytes.fromhex(m["s3seal-md5"])
    assert aad.hex() == v["wrap_aad"], "wrap AAD"
    dek = AESGCM(wrap_key).decrypt(wrapped[:12], wrapped[12:], aad)
    assert dek.hex() == v["dek"], "unwrapped DEK"


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    vf = json.load(open(os.path.join(d, "vectors.json")))
    for v in vf["streams"]:
        check_stream(d, v)
        print("ok stream", v["name"])
    for v in vf["wraps"]:
        check_wrap(v)
        print("ok wrap", v["name"])


if __name__ == "__main__":
    main()
