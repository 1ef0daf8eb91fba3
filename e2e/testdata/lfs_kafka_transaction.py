"""Produces transactionally through s3seal's Kafka listener with confluent-kafka.

Usage: lfs_kafka_transaction.py BOOTSTRAP TOPIC COMMITTED_FILE ABORTED_FILE

A transactional producer (transactional.id "lfs-e2e") sends the first
file's bytes, marked LFS_BLOB with their SHA-256, with key "committed" in
a transaction it commits, then the second file's with key "aborted" in
one it aborts once the record was acknowledged. Any error ends it with a
traceback and exit status 1.
"""

import hashlib
import sys

from confluent_kafka import Producer


def main():
    bootstrap, topic, committed, aborted = sys.argv[1:5]
    producer = Producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": "lfs-e2e",
        "message.max.bytes": 16 * 1024 * 1024,
    })
    producer.init_transactions(30)
    for key, path, commit in ((b"committed", committed, True), (b"aborted", aborted, False)):
        with open(path, "rb") as f:
            blob = f.read()
        producer.begin_transaction()
        producer.produce(topic, key=key, value=blob, headers=[("LFS_BLOB", hashlib.sha256(blob).hexdigest())])
        if producer.flush(30):
            raise SystemExit("the record of %s was not acknowledged" % key)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    print("done")


if __name__ == "__main__":
    main()
