import boto3, sys, json
from botocore.config import Config
m = boto3.client('s3', endpoint_url='http://127.0.0.1:5055', aws_access_key_id='x', aws_secret_access_key='y', region_name='us-east-1', config=Config(s3={'addressing_style':'path'}))
def meta(b,k,vid=None):
    kw = {'Bucket':b,'Key':k}
    if vid: kw['VersionId']=vid
    return m.head_object(**kw)['Metadata']
def setmeta(b,k,md):
    m.copy_object(Bucket=b,Key=k,CopySource={'Bucket':b,'Key':k},Metadata=md,MetadataDirective='REPLACE')
cmd = sys.argv[1]
if cmd == 'show':
    print(json.dumps(meta(sys.argv[2], sys.argv[3]), indent=1))
elif cmd == 'swap':   # swap FIELD from src object into dst object: swap field sb sk db dk
    f, sb, sk, db, dk = sys.argv[2:7]
    src, dst = meta(sb,sk), meta(db,dk)
    for fld in f.split(','):
        if fld in src: dst[fld] = src[fld]
        else: dst.pop(fld, None)
    setmeta(db,dk,dst)
elif cmd == 'set':    # set b k field value ('' deletes)
    b,k,f,v = sys.argv[2:6]
    md = meta(b,k)
    if v == '': md.pop(f, None)
    else: md[f] = v
    setmeta(b,k,md)
elif cmd == 'clone':  # clone whole object (body+meta) sb sk -> db dk
    sb, sk, db, dk = sys.argv[2:6]
    m.copy_object(Bucket=db,Key=dk,CopySource={'Bucket':sb,'Key':sk},MetadataDirective='COPY')
