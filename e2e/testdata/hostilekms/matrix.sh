. /tmp/lab/kenv.sh
ctx=$(echo -n '{"t":"a"}' | base64)
ctxb=$(echo -n '{"t":"b"}' | base64)
reset() {
  s3as tenant-a s3api put-object --bucket a-data --key o1 --body a.txt >/dev/null
  echo hello-a2 > a2.txt
  s3as tenant-a s3api put-object --bucket a-data --key o2 --body a2.txt >/dev/null
  s3as tenant-a s3api put-object --bucket a-data --key c1 --body a.txt --server-side-encryption aws:kms --ssekms-encryption-context $ctx >/dev/null
  s3as tenant-a s3api put-object --bucket a-data --key c2 --body a2.txt --server-side-encryption aws:kms --ssekms-encryption-context $ctxb >/dev/null
  s3as tenant-a s3api put-object --bucket a-data --key bk1 --body a.txt --server-side-encryption aws:kms --bucket-key-enabled >/dev/null
  s3as tenant-a s3api put-object --bucket a-data --key bk2 --body a2.txt --server-side-encryption aws:kms --bucket-key-enabled >/dev/null
  s3as tenant-b s3api put-object --bucket b-data --key o1 --body b.txt >/dev/null
  s3as tenant-b s3api put-object --bucket b-data --key bk1 --body b.txt --server-side-encryption aws:kms --bucket-key-enabled >/dev/null
}
get() { out=$(s3as admin s3 cp s3://$1/$2 - 2>&1 | head -c 200 | tr '\n' ' '); echo "   GET $1/$2 -> $out"; }
try() { # desc fields sb sk db dk
  reset
  python3 tamper.py swap "$2" $3 $4 $5 $6
  echo "== $1 [$2 from $3/$4 into $5/$6]"; get $5 $6
}
try "sealed key same bucket" s3seal-kms a-data o1 a-data o2
try "kid from B" s3seal-kid b-data o1 a-data o1
try "kid+kms from B" s3seal-kid,s3seal-kms b-data o1 a-data o1
try "kid+kms+dek+oid from B" s3seal-kid,s3seal-kms,s3seal-dek,s3seal-oid b-data o1 a-data o1
try "all envelope from B except meta" s3seal-kid,s3seal-kms,s3seal-dek,s3seal-oid,s3seal-size b-data o1 a-data o1
try "all incl meta from B" s3seal-kid,s3seal-kms,s3seal-dek,s3seal-oid,s3seal-size,s3seal-meta b-data o1 a-data o1
try "ctx swap c2->c1" s3seal-kctx a-data c2 a-data c1
try "ctx removed (from o1)" s3seal-kctx a-data o1 a-data c1
try "ctx added (from c1 to o1)" s3seal-kctx a-data c1 a-data o1
try "bk flag removed" s3seal-bk a-data o1 a-data bk1
try "bk flag added" s3seal-bk a-data bk1 a-data o1
try "bk sealed key from other bk obj same bucket" s3seal-kms a-data bk2 a-data bk1
try "bk sealed key+kid from B bucket key" s3seal-kms,s3seal-kid b-data bk1 a-data bk1
try "o1 dek+oid+meta from o2 (same key, same bucket)" s3seal-dek,s3seal-oid,s3seal-meta,s3seal-kms,s3seal-size a-data o2 a-data o1
reset
python3 tamper.py clone b-data o1 a-data o1; echo "== whole object b-data/o1 cloned onto a-data/o1"; get a-data o1
reset
python3 tamper.py clone a-data bk2 a-data bk1; echo "== whole bucket-key object bk2 cloned onto bk1"; get a-data bk1
reset
echo "== after reset"; get a-data o1; get a-data bk1; get a-data c1
