import boto3, hashlib, os
from botocore.config import Config
def cl(who, port=9010): return boto3.client('s3', endpoint_url=f'http://127.0.0.1:{port}', aws_access_key_id=who, aws_secret_access_key=who+'-secret', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}, retries={'max_attempts':1}))
a, b = cl('tenant-a'), cl('tenant-b')
m = boto3.client('s3', endpoint_url='http://127.0.0.1:5055', aws_access_key_id='x', aws_secret_access_key='y', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}))
def info(bucket, key, uid): return '.s3seal/uploads/' + hashlib.sha256(f'{bucket}\0{key}\0{uid}'.encode()).hexdigest()[:32] + '/info'
def short(e): return str(e)[:150]
body = os.urandom(6<<20)
# --- completed multipart objects: swap envelope fields
def mpput(c, bucket, key):
    u = c.create_multipart_upload(Bucket=bucket, Key=key, ServerSideEncryption='aws:kms')['UploadId']
    e = c.upload_part(Bucket=bucket, Key=key, UploadId=u, PartNumber=1, Body=body)['ETag']
    c.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=u, MultipartUpload={'Parts':[{'PartNumber':1,'ETag':e}]})
def setmeta(bucket, key, md): m.copy_object(Bucket=bucket, Key=key, CopySource={'Bucket':bucket,'Key':key}, Metadata=md, MetadataDirective='REPLACE')
for fields in (['s3seal-kms'], ['s3seal-kid','s3seal-kms'], ['s3seal-kid','s3seal-kms','s3seal-dek','s3seal-oid','s3seal-meta']):
    mpput(a, 'shared', 'mpx'); mpput(b, 'shared', 'mpy')
    mx, my = m.head_object(Bucket='shared', Key='mpx')['Metadata'], m.head_object(Bucket='shared', Key='mpy')['Metadata']
    for f in fields: mx[f] = my[f]
    setmeta('shared', 'mpx', mx)
    # after the metadata copy the backend ETag changes (copy): s3seal finds the manifest by listing
    try: r = a.get_object(Bucket='shared', Key='mpx')['Body'].read(); print('MP swap', fields, '->', 'SAME BODY' if r == body else 'other bytes!')
    except Exception as e: print('MP swap', fields, '->', short(e))
# manifest swap: replace mpx's manifest with mpy's
mpput(a, 'shared', 'mpx'); mpput(b, 'shared', 'mpy')
mx, my = m.head_object(Bucket='shared', Key='mpx'), m.head_object(Bucket='shared', Key='mpy')
def manifests(oid): return [o['Key'] for o in m.list_objects_v2(Bucket='shared', Prefix=f'.s3seal/manifests/{oid}/').get('Contents',[])]
mfx, mfy = manifests(mx['Metadata']['s3seal-oid']), manifests(my['Metadata']['s3seal-oid'])
print('manifests', mfx, mfy)
m.copy_object(Bucket='shared', Key=mfx[0], CopySource={'Bucket':'shared','Key':mfy[0]}, MetadataDirective='COPY')
try: print('manifest swapped ->', a.get_object(Bucket='shared', Key='mpx')['Body'].read() == body)
except Exception as e: print('manifest swapped ->', short(e))
# --- in-progress upload: swap info's envelope with another upload's (same name, other tenant's key)
ua = a.create_multipart_upload(Bucket='shared', Key='inprog', ServerSideEncryption='aws:kms')['UploadId']
ub = b.create_multipart_upload(Bucket='shared', Key='inprog', ServerSideEncryption='aws:kms')['UploadId']
ia, ib = info('shared','inprog',ua), info('shared','inprog',ub)
ha, hb = m.head_object(Bucket='shared', Key=ia)['Metadata'], m.head_object(Bucket='shared', Key=ib)['Metadata']
print('info A keys', sorted(ha))
for label, md in (('whole info of B', dict(hb)), ('B envelope, A upload-settings', {**hb, 'upload-settings': ha.get('upload-settings')}),
                  ('B envelope, settings stripped, plain upload-id of A', {k:v for k,v in {**hb, 'upload-id': ha.get('upload-id')}.items() if k!='upload-settings'})):
    m.put_object(Bucket='shared', Key=ia, Body=b'', Metadata={k:v for k,v in md.items() if v is not None})
    try:
        p = a.upload_part(Bucket='shared', Key='inprog', UploadId=ua, PartNumber=1, Body=body)
        print(label, '-> UploadPart accepted, answered key', p.get('SSEKMSKeyId')[-12:])
        try:
            d = a.complete_multipart_upload(Bucket='shared', Key='inprog', UploadId=ua, MultipartUpload={'Parts':[{'PartNumber':1,'ETag':p['ETag']}]})
            print('   complete ->', d.get('SSEKMSKeyId','')[-12:])
            print('   read ->', a.get_object(Bucket='shared', Key='inprog')['Body'].read() == body)
        except Exception as e: print('   complete/read ->', short(e))
    except Exception as e: print(label, '-> UploadPart', short(e))
    m.put_object(Bucket='shared', Key=ia, Body=b'', Metadata=ha)
