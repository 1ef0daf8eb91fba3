import boto3, threading, os, hashlib
from botocore.config import Config
def cl(port, who='tenant-a'):
    return boto3.client('s3', endpoint_url=f'http://127.0.0.1:{port}', aws_access_key_id=who, aws_secret_access_key=who+'-secret', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}, retries={'max_attempts':1}))
r1, r2 = cl(9010), cl(9013)
A = open('/tmp/lab/keyA').read().strip(); B = open('/tmp/lab/keyB').read().strip()
p1, p2 = os.urandom(5<<20), os.urandom(1<<20)
# upload created on r1 with context + bucket key; parts on both; completion on both at once
import base64, json
ctx = base64.b64encode(json.dumps({"dept":"x"}).encode()).decode()
mp = r1.create_multipart_upload(Bucket='a-data', Key='rep', ServerSideEncryption='aws:kms', SSEKMSEncryptionContext=ctx, BucketKeyEnabled=True)
print('create:', {k: mp.get(k) for k in ('ServerSideEncryption','SSEKMSKeyId','BucketKeyEnabled','SSEKMSEncryptionContext')})
e1 = r1.upload_part(Bucket='a-data', Key='rep', UploadId=mp['UploadId'], PartNumber=1, Body=p1)
e2 = r2.upload_part(Bucket='a-data', Key='rep', UploadId=mp['UploadId'], PartNumber=2, Body=p2)
print('part answers:', {k: e2.get(k) for k in ('ServerSideEncryption','SSEKMSKeyId','BucketKeyEnabled')})
parts = {'Parts':[{'PartNumber':1,'ETag':e1['ETag']},{'PartNumber':2,'ETag':e2['ETag']}]}
res = {}
def done(n, c):
    try: res[n] = c.complete_multipart_upload(Bucket='a-data', Key='rep', UploadId=mp['UploadId'], MultipartUpload=parts)
    except Exception as e: res[n] = e
ts = [threading.Thread(target=done, args=(n,c)) for n,c in (('r1',r1),('r2',r2))]
[t.start() for t in ts]; [t.join() for t in ts]
for n,v in res.items(): print(n, v if isinstance(v, Exception) else {k: v.get(k) for k in ('ETag','ServerSideEncryption','SSEKMSKeyId','BucketKeyEnabled')})
for c in (r1, r2):
    b = c.get_object(Bucket='a-data', Key='rep')
    print('get ok:', b['Body'].read() == p1+p2, b.get('SSEKMSKeyId'), b.get('BucketKeyEnabled'))
# racing writers with different keys on one key, single PUTs
errs = []
def w(i):
    c = cl(9010 if i%2 else 9013)
    try: c.put_object(Bucket='a-data', Key='race', Body=f'body-{i}'.encode(), ServerSideEncryption='aws:kms', SSEKMSKeyId=A if i%2 else B)
    except Exception as e: errs.append(e)
ts = [threading.Thread(target=w, args=(i,)) for i in range(20)]
[t.start() for t in ts]; [t.join() for t in ts]
o = r1.get_object(Bucket='a-data', Key='race'); print('race result', o['Body'].read(), o['SSEKMSKeyId'][-12:], errs[:2])
