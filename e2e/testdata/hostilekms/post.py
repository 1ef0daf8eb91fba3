import boto3, requests, sys
from botocore.config import Config
A = open('/tmp/lab/keyA').read().strip()
c = boto3.client('s3', endpoint_url='http://127.0.0.1:9010', aws_access_key_id='tenant-b', aws_secret_access_key='tenant-b-secret', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}, signature_version='s3v4'))
fields = {'x-amz-server-side-encryption':'aws:kms','x-amz-server-side-encryption-aws-kms-key-id':A}
p = c.generate_presigned_post('b-data','post-a', Fields=fields, Conditions=[{k:v} for k,v in fields.items()])
r = requests.post(p['url'], data=p['fields'], files={'file':('x', b'post body')})
print('POST', r.status_code, r.headers.get('x-amz-server-side-encryption-aws-kms-key-id'), r.text[:200])
u = c.generate_presigned_url('put_object', Params={'Bucket':'b-data','Key':'presigned-a','ServerSideEncryption':'aws:kms','SSEKMSKeyId':A})
r = requests.put(u, data=b'presigned body', headers={'x-amz-server-side-encryption':'aws:kms','x-amz-server-side-encryption-aws-kms-key-id':A})
print('presigned PUT', r.status_code, r.headers.get('x-amz-server-side-encryption-aws-kms-key-id'), r.text[:200])
# multipart: create under B's default (cred key), part names A
mp = c.create_multipart_upload(Bucket='b-data', Key='mp-a', ServerSideEncryption='aws:kms')
print('create', mp.get('SSEKMSKeyId'))
pr = c.upload_part(Bucket='b-data', Key='mp-a', UploadId=mp['UploadId'], PartNumber=1, Body=b'x'*100, SSECustomerAlgorithm=None) if False else None
import botocore
def add_hdr(request, **kw):
    request.headers['x-amz-server-side-encryption-aws-kms-key-id'] = A
    request.headers['x-amz-server-side-encryption'] = 'aws:kms'
c.meta.events.register('before-sign.s3.UploadPart', add_hdr)
pr = c.upload_part(Bucket='b-data', Key='mp-a', UploadId=mp['UploadId'], PartNumber=1, Body=b'x'*100)
print('part', pr.get('SSEKMSKeyId'))
done = c.complete_multipart_upload(Bucket='b-data', Key='mp-a', UploadId=mp['UploadId'], MultipartUpload={'Parts':[{'PartNumber':1,'ETag':pr['ETag']}]})
print('complete', done.get('SSEKMSKeyId'), done.get('ServerSideEncryption'))
print('head', c.head_object(Bucket='b-data', Key='mp-a').get('SSEKMSKeyId'))
