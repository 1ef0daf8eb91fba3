#!/usr/bin/env python3
"""Check the s3seal test vectors (formats 1 and 2) against docs/FORMAT.md, independently of
the Go code: every value is recomputed here from the spec with
pyca/cryptography (pip install cryptography).

Usage: python3 check_vectors.py [directory holding vectors.json]
"""
import base64
import hashlib
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
    assert "=" not in s
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def cipher_size(p):
    return p + 28 * max(1, -(-p // SEG))


def checksum_block(cs):
    out = bytes([len(cs)])
    for name in sorted((cs or {}).keys(), key=lambda n: n.encode()):
        v = cs[name].encode()
        out += bytes([len(name)]) + name.encode() + bytes([len(v)]) + v
    return out


def read_checksum_block(b):
    n, b, cs, prev = b[0], b[1:], {}, b""
    for _ in range(n):
        ln = b[0]
        name, b = b[1:1 + ln], b[1 + ln:]
        lv = b[0]
        val, b = b[1:1 + lv], b[1 + lv:]
        assert name > prev, "checksum names ascending"
        cs[name.decode()], prev = val.decode(), name
    return cs, b


def check_stream(d, v):
    ct = open(os.path.join(d, v["ciphertext_file"]), "rb").read()
    dek, oid, sid = bytes.fromhex(v["dek"]), bytes.fromhex(v["oid"]), bytes.fromhex(v["stream_id"])
    part, p = v["part"], v["plain_size"]
    nseg = max(1, -(-p // SEG))
    assert len(ct) == cipher_size(p), "ciphertext size"
    gcm, out, pos = AESGCM(dek), b"", 0
    for i in range(nseg):
        n = min(SEG, p - i * SEG)
        seg = ct[pos:pos + n + 28]
        pos += n + 28
        final = 1 if i == nseg - 1 else 0
        aad = b"s3seal v1 seg\x00" + oid + struct.pack(">I", part) + sid + struct.pack(">QB", i, final)
        assert aad.hex() == v["aads"][i], "segment AAD %d" % i
        assert seg[:12].hex() == v["nonces"][i], "nonce %d" % i
        out += gcm.decrypt(seg[:12], seg[12:], aad)
    assert pos == len(ct), "trailing bytes"
    assert out == pattern(p), "plaintext"


HEADER_IDS = {"Content-Type": 1, "Content-Encoding": 2, "Content-Disposition": 3, "Content-Language": 4,
              "Cache-Control": 5, "Expires": 6, "x-amz-website-redirect-location": 7}


def object_meta_encoding(val):
    hs = sorted((HEADER_IDS[name], h["value"].encode()) for name, h in val["headers"].items())
    out = bytes([len(hs)])
    for i, value in hs:
        assert value, "an absent header is left out"
        out += bytes([i]) + struct.pack(">H", len(value)) + value
    user = sorted((k.encode(), u.encode()) for k, u in val["user"].items())
    out += struct.pack(">H", len(user))
    for k, u in user:
        assert k and k == k.lower()
        out += struct.pack(">H", len(k)) + k + struct.pack(">H", len(u)) + u
    return out


def check_object_meta(v):
    for name, h in v["values"]["headers"].items():
        assert HEADER_IDS[name] == h["id"], "header id of " + name
    msg = open_blob(v, b"s3seal v2 object meta\x00", b"")
    assert msg == object_meta_encoding(v["values"]), "object meta encoding"


def check_wrap(v, object_metas):
    kek, oid, kid, m = bytes.fromhex(v["kek"]), bytes.fromhex(v["oid"]), v["kid"], v["metadata"]
    bucket, key = v["bucket"].encode(), v["key"].encode()
    version = v["version"]
    assert m["s3seal-v"] == str(version) and m["s3seal-kid"] == kid
    assert len(m["s3seal-oid"]) == 22 and b64url(m["s3seal-oid"]) == oid
    assert not any(k.startswith("s3seal-md5") or k.startswith("s3seal-checksum") for k in m), "fingerprints in clear"
    wrapped = b64url(m["s3seal-dek"])
    wrap_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=oid, info=b"s3seal v1 wrap").derive(kek)
    assert wrap_key.hex() == v["wrap_key"], "wrap key"
    aad = (b"s3seal v%d wrap\x00" % version + bytes([len(kid)]) + kid.encode() + oid
           + struct.pack(">H", len(bucket)) + bucket + struct.pack(">H", len(key)) + key)
    if "s3seal-mp" in m:
        assert m["s3seal-mp"] == "1" and "s3seal-size" not in m
        aad += b"M"
    else:
        aad += b"S" + struct.pack(">Q", int(m["s3seal-size"]))
    external = ":" in kid
    if external:
        # A master key in a KMS: "kek" is the intermediate key the KMS
        # opens from s3seal-kms; the context and bucket-key flag are bound.
        assert b64url(m["s3seal-kms"]).hex() == v["sealed_key"], "sealed key"
        kctx = b64url(m["s3seal-kctx"]).decode() if "s3seal-kctx" in m else ""
        assert kctx == v.get("kms_context", ""), "encryption context"
        if kctx:
            assert isinstance(json.loads(kctx), dict), "context is a JSON object"
        bk = m.get("s3seal-bk") == "1"
        assert bk == v.get("bucket_key", False) and m.get("s3seal-bk", "1") == "1", "bucket key flag"
        aad += b"K" + bytes([1 if bk else 0]) + struct.pack(">H", len(kctx.encode())) + kctx.encode()
    else:
        assert not any(k in m for k in ("s3seal-kms", "s3seal-kctx", "s3seal-bk")), "KMS keys on a local key"
    assert aad.hex() == v["wrap_aad"], "wrap AAD"
    payload = AESGCM(wrap_key).decrypt(wrapped[:12], wrapped[12:], aad)
    assert payload.hex() == v["payload"], "payload"
    assert payload[:32].hex() == v["dek"], "unwrapped DEK"
    if "s3seal-mp" in m:
        assert len(payload) == 32
    else:
        assert payload[32:48].hex() == v["plain_md5"], "sealed MD5"
        cs, rest = read_checksum_block(payload[48:])
        assert rest == b"" and cs == (v["checksums"] or {}), "sealed checksums"
        assert payload[48:] == checksum_block(v["checksums"] or {})
    if version == 1:
        assert "s3seal-meta" not in m
        return
    assert version == 2
    # Format 2: everything the client wrote beside the bytes is sealed in
    # s3seal-meta, with the DEK; no other user metadata is stored.
    assert set(m) <= {"s3seal-v", "s3seal-kid", "s3seal-oid", "s3seal-dek", "s3seal-size", "s3seal-mp", "s3seal-ssec",
                      "s3seal-meta", "s3seal-kms", "s3seal-kctx", "s3seal-bk"}, "format 2 stores nothing else"
    sealed = b64url(m["s3seal-meta"])
    aad = b"s3seal v2 object meta\x00" + oid
    msg = AESGCM(payload[:32]).decrypt(sealed[:12], sealed[12:], aad)
    matches = [o for o in object_metas if o["sealed"] == sealed.hex()]
    assert len(matches) == 1 and msg == object_meta_encoding(matches[0]["values"]), "sealed object meta"


def open_blob(v, label, extra):
    dek, oid = bytes.fromhex(v["dek"]), bytes.fromhex(v["oid"])
    sealed = bytes.fromhex(v["sealed"])
    aad = label + oid + extra
    assert aad.hex() == v["aad"], "blob AAD"
    assert sealed[:12].hex() == v["nonce"]
    msg = AESGCM(dek).decrypt(sealed[:12], sealed[12:], aad)
    assert msg.hex() == v["encoding"], "blob encoding"
    return msg


def origin_encoding(o):
    return (bytes.fromhex(o["dek"]) + bytes.fromhex(o["oid"]) + struct.pack(">I", o["part"])
            + bytes.fromhex(o["stream_id"]))


def check_manifest(v):
    msg = open_blob(v, b"s3seal v1 manifest\x00", b"")
    val = v["values"]
    # Version 2 when a part is a copy of another object's stream: each part
    # then ends in 0, or 1 and its origin.
    copied = any("origin" in p for p in val["parts"])
    label = b"s3seal v2 manifest\x00" if copied else b"s3seal v1 manifest\x00"
    want = label + struct.pack(">I", len(val["parts"]))
    for p in val["parts"]:
        want += (struct.pack(">I", p["part"]) + bytes.fromhex(p["stream_id"]) + struct.pack(">Q", p["plain_size"])
                 + bytes.fromhex(p["plain_md5"]) + checksum_block(p["checksums"] or {}))
        if copied:
            want += b"\x01" + origin_encoding(p["origin"]) if "origin" in p else b"\x00"
    want += checksum_block(val["checksums"] or {})
    assert msg == want, "manifest encoding"
    assert val["size"] == sum(p["plain_size"] for p in val["parts"])
    assert val["cipher_size"] == sum(cipher_size(p["plain_size"]) for p in val["parts"])
    etag = hashlib.md5(b"".join(bytes.fromhex(p["plain_md5"]) for p in val["parts"])).hexdigest()
    assert val["etag"] == "%s-%d" % (etag, len(val["parts"])), "multipart ETag"


def check_part_record(v):
    val = v["values"]
    msg = open_blob(v, b"s3seal v1 part\x00", struct.pack(">I", val["part"]))
    etag = val["backend_etag"].encode()
    want = (bytes.fromhex(val["stream_id"]) + struct.pack(">Q", val["plain_size"]) + bytes.fromhex(val["plain_md5"])
            + bytes([len(etag)]) + etag + checksum_block(val["checksums"] or {}))
    if "origin" in val:
        want += b"\x01" + origin_encoding(val["origin"])
    assert msg == want, "part record encoding"


def check_origin(d, v, streams):
    """An origin opens under the copy's key, and its key opens the stream it
    names, one of the stored streams, to that stream's plaintext."""
    msg = open_blob(v, b"s3seal v2 origin\x00", b"")
    o = v["values"]
    assert msg == origin_encoding(o), "origin encoding"
    named = [s for s in streams if s["dek"] == o["dek"] and s["oid"] == o["oid"]
             and s["part"] == o["part"] and s["stream_id"] == o["stream_id"]]
    assert len(named) == 1, "the origin names one stored stream"
    check_stream(d, named[0])


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    vf = json.load(open(os.path.join(d, "vectors.json")))
    for v in vf["streams"]:
        check_stream(d, v)
        print("ok stream", v["name"])
    for v in vf["object_metas"]:
        check_object_meta(v)
        print("ok object meta", v["name"])
    for v in vf["wraps"]:
        check_wrap(v, vf["object_metas"])
        print("ok wrap", v["name"])
    for v in vf["manifests"]:
        check_manifest(v)
        print("ok manifest", v["name"])
    for v in vf["part_records"]:
        check_part_record(v)
        print("ok part record", v["name"])
    for v in vf["origins"]:
        check_origin(d, v, vf["streams"])
        print("ok origin", v["name"])


if __name__ == "__main__":
    main()
