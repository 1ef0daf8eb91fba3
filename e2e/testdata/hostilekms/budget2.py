import boto3, base64, json
from botocore.config import Config
c = boto3.client('s3', endpoint_url='http://127.0.0.1:9010', aws_access_key_id='tenant-a', aws_secret_access_key='tenant-a-secret', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}, retries={'max_attempts':1}))
m = boto3.client('s3', endpoint_url='http://127.0.0.1:5055', aws_access_key_id='x', aws_secret_access_key='y', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}))
def size(md): return sum(len(k)+len(v) for k,v in md.items())
for n, kw in [('no-ctx, user meta at s3seal limit', {}), ('tiny ctx', dict(SSEKMSEncryptionContext=base64.b64encode(b'{"a":"b"}').decode()))]:
    c.put_object(Bucket='a-data', Key='budget', Body=b'b', ContentType='a/b', ServerSideEncryption='aws:kms', Metadata={'pad':'x'*(1190-3-3-3-4-3)}, **kw)
    md = m.head_object(Bucket='a-data', Key='budget')['Metadata']
    print(f'{n:35s} stored {size(md)} bytes ->', 'OVER 2048' if size(md)>2048 else 'ok')
    # what client sent as user metadata (S3 counts keys+values)
print('client user metadata sent:', len('pad')+1190-16)
