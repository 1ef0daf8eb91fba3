import boto3, base64, json
from botocore.config import Config
c = boto3.client('s3', endpoint_url='http://127.0.0.1:9010', aws_access_key_id='tenant-a', aws_secret_access_key='tenant-a-secret', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}, retries={'max_attempts':1}))
m = boto3.client('s3', endpoint_url='http://127.0.0.1:5055', aws_access_key_id='x', aws_secret_access_key='y', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}))
def size(md): return sum(len(k)+len(v) for k,v in md.items())
# context as long as s3seal takes: canonical JSON <= 1024
ctx = {"k": "v"*1014}
print('canonical ctx len', len(json.dumps(ctx, separators=(',',':'))))
enc = base64.b64encode(json.dumps(ctx, separators=(',',':')).encode()).decode()
cases = {
 'ctx-only': dict(SSEKMSEncryptionContext=enc),
 'meta-only-kms': dict(Metadata={'pad':'x'*1180}),
 'ctx+usermeta-1180': dict(SSEKMSEncryptionContext=enc, Metadata={'pad':'x'*1180}),
 'ctx+usermeta-300 (rclone-ish*4)': dict(SSEKMSEncryptionContext=enc, Metadata={'pad':'x'*300}),
}
for name, kw in cases.items():
    try:
        c.put_object(Bucket='a-data', Key='budget', Body=b'b', ServerSideEncryption='aws:kms', **kw)
        md = m.head_object(Bucket='a-data', Key='budget')['Metadata']
        print(f'{name:35s} stored user metadata {size(md)} bytes (S3 limit 2048) ->', 'OVER' if size(md)>2048 else 'ok', {k:len(v) for k,v in md.items()})
    except Exception as e: print(name, '->', e)
# multipart create with big ctx
try:
    mp = c.create_multipart_upload(Bucket='a-data', Key='budgetmp', ServerSideEncryption='aws:kms', SSEKMSEncryptionContext=enc, Metadata={'pad':'x'*1180})
    print('MPU create ok; backend uploads:', [u['Key'] for u in m.list_multipart_uploads(Bucket='a-data').get('Uploads',[])][:3])
    c.abort_multipart_upload(Bucket='a-data', Key='budgetmp', UploadId=mp['UploadId'])
except Exception as e: print('mpu', e)
