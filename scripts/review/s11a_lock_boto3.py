#!/usr/bin/env python3
# Review s11a: Object Lock delete paths through a real s3seal (embedded
# default) with boto3. Usage: s11a_lock_boto3.py http://127.0.0.1:PORT
# (dev credentials). Prints one line per path; "HOLDS" when the locked
# version survived.
import sys, datetime, boto3
from botocore.config import Config
ep = sys.argv[1]
s = boto3.client('s3', endpoint_url=ep, aws_access_key_id='s3seal', aws_secret_access_key='s3seal-dev-secret',
                 region_name='us-east-1', config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
s.create_bucket(Bucket='lkb', ObjectLockEnabledForBucket=True)
until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
v = s.put_object(Bucket='lkb', Key='k', Body=b'locked', ObjectLockMode='COMPLIANCE', ObjectLockRetainUntilDate=until)['VersionId']
def alive():
    try:
        return s.get_object(Bucket='lkb', Key='k', VersionId=v)['Body'].read() == b'locked'
    except Exception:
        return False
def attempt(name, f):
    try:
        r = f(); out = 'ok ' + str(r)[:120]
    except Exception as e:
        out = 'err ' + str(e)[:120]
    print(('HOLDS ' if alive() else 'BROKEN ') + name + ': ' + out)
attempt('DELETE ?versionId', lambda: s.delete_object(Bucket='lkb', Key='k', VersionId=v))
attempt('DELETE ?versionId bypass', lambda: s.delete_object(Bucket='lkb', Key='k', VersionId=v, BypassGovernanceRetention=True))
attempt('DeleteObjects', lambda: s.delete_objects(Bucket='lkb', Delete={'Objects': [{'Key': 'k', 'VersionId': v}]}))
attempt('suspend versioning', lambda: s.put_bucket_versioning(Bucket='lkb', VersioningConfiguration={'Status': 'Suspended'}))
attempt('shorten retention', lambda: s.put_object_retention(Bucket='lkb', Key='k', VersionId=v,
        Retention={'Mode': 'COMPLIANCE', 'RetainUntilDate': until - datetime.timedelta(minutes=30)}))
attempt('to GOVERNANCE', lambda: s.put_object_retention(Bucket='lkb', Key='k', VersionId=v,
        Retention={'Mode': 'GOVERNANCE', 'RetainUntilDate': until}, BypassGovernanceRetention=True))
attempt('overwrite', lambda: s.put_object(Bucket='lkb', Key='k', Body=b'x'))
s.put_object(Bucket='lkb', Key='src', Body=b'evil')
attempt('copy onto', lambda: s.copy_object(Bucket='lkb', Key='k', CopySource={'Bucket': 'lkb', 'Key': 'src'}))
def mpu():
    u = s.create_multipart_upload(Bucket='lkb', Key='k')['UploadId']
    p = s.upload_part(Bucket='lkb', Key='k', UploadId=u, PartNumber=1, Body=b'y')
    return s.complete_multipart_upload(Bucket='lkb', Key='k', UploadId=u, MultipartUpload={'Parts': [{'PartNumber': 1, 'ETag': p['ETag']}]})
attempt('multipart onto', mpu)
attempt('DELETE (marker)', lambda: s.delete_object(Bucket='lkb', Key='k'))
attempt('DeleteBucket', lambda: s.delete_bucket(Bucket='lkb'))
