"""Produces through s3seal's Kafka listener with confluent-kafka (librdkafka).

Usage: lfs_kafka_produce.py BOOTSTRAP TOPIC_PREFIX CODEC=BLOB_FILE...

For each CODEC (none, gzip, snappy, lz4, zstd) an idempotent producer with
that compression.type sends, to topic TOPIC_PREFIX + CODEC, the file's
bytes as one record with the header LFS_BLOB set to their SHA-256 (hex)
and key "blob", then a plain record (key "plain", value "plain record
CODEC", header "app: kept"), and waits for both to be acknowledged. Any
delivery error is printed and makes the exit status 1.
"""

import hashlib
import sys

from confluent_kafka import Producer


def main():
    bootstrap, prefix = sys.argv[1], sys.argv[2]
    failed = []
    for arg in sys.argv[3:]:
        codec, path = arg.split("=", 1)
        with open(path, "rb") as f:
            blob = f.read()
        producer = Producer({
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "compression.type": codec,
            # librdkafka refuses a record over message.max.bytes itself.
            "message.max.bytes": 16 * 1024 * 1024,
            "linger.ms": 50,
        })
        errors = []

        def delivered(err, msg, errors=errors):
            if err is not None:
                errors.append(str(err))

        topic = prefix + codec
        producer.produce(topic, key=b"blob", value=blob,
                         headers=[("LFS_BLOB", hashlib.sha256(blob).hexdigest()), ("content-type", "application/x-" + codec)],
                         on_delivery=delivered)
        producer.produce(topic, key=b"plain", value=("plain record " + codec).encode(),
                         headers=[("app", b"kept")], on_delivery=delivered)
        left = producer.flush(60)
        if left or errors:
            failed.append("%s: %d not delivered, errors %s" % (codec, left, errors))
        else:
            print("delivered", topic)
    for f in failed:
        print("FAILED", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
