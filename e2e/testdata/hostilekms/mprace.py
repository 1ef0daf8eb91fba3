import boto3, threading, os
from botocore.config import Config
def cl(port): return boto3.client('s3', endpoint_url=f'http://127.0.0.1:{port}', aws_access_key_id='admin', aws_secret_access_key='admin-secret', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}, retries={'max_attempts':1}))
A = open('/tmp/lab/keyA').read().strip(); B = open('/tmp/lab/keyB').read().strip()
bodies = {}
def up(i):
    c = cl(9010 if i % 2 else 9013); key = A if i % 2 else B
    p1, p2 = os.urandom(5<<20), bytes([i])*1000
    bodies[i] = p1+p2
    u = c.create_multipart_upload(Bucket='shared', Key='mprace', ServerSideEncryption='aws:kms', SSEKMSKeyId=key, BucketKeyEnabled=bool(i%3))['UploadId']
    e1 = c.upload_part(Bucket='shared', Key='mprace', UploadId=u, PartNumber=1, Body=p1)['ETag']
    e2 = c.upload_part(Bucket='shared', Key='mprace', UploadId=u, PartNumber=2, Body=p2)['ETag']
    c.complete_multipart_upload(Bucket='shared', Key='mprace', UploadId=u, MultipartUpload={'Parts':[{'PartNumber':1,'ETag':e1},{'PartNumber':2,'ETag':e2}]})
ts = [threading.Thread(target=up, args=(i,)) for i in range(6)]
[t.start() for t in ts]; [t.join() for t in ts]
for port in (9010, 9013):
    o = cl(port).get_object(Bucket='shared', Key='mprace'); data = o['Body'].read()
    match = [i for i, b in bodies.items() if b == data]
    print(port, 'object is upload', match, 'key', o['SSEKMSKeyId'][-12:], 'expected key', (A if match[0] % 2 else B)[-12:])
