#!/usr/bin/env python3
"""Sets up moto_server for the S3 tests, with signature checking on.

    s3fixture.py ENDPOINT keys                  creates a user with a read-write policy
                                                and prints "ACCESS_KEY SECRET_KEY"
    s3fixture.py ENDPOINT put AK SK BUCKET KEY FILE [sha256]
                                                creates the bucket if needed, puts FILE
                                                (with a SHA-256 checksum stored, if asked)
    s3fixture.py ENDPOINT delete AK SK BUCKET KEY
    s3fixture.py ENDPOINT putmany AK SK BUCKET PREFIX COUNT SIZE
                                                puts COUNT objects PREFIX0000.bin, … of
                                                SIZE bytes each (byte i of object n is
                                                (i * 31 + n) % 251), in one process

moto_server must run with INITIAL_NO_AUTH_ACTION_COUNT=3: the first three
calls (create user, put policy, create key) need no signature, every later
one is checked.
"""
import json
import sys

import boto3
from botocore.config import Config

endpoint = sys.argv[1]
cmd = sys.argv[2]
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})


def client(service, ak="x", sk="x"):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=ak, aws_secret_access_key=sk, config=cfg)


if cmd == "keys":
    iam = client("iam")
    iam.create_user(UserName="sync")
    iam.put_user_policy(UserName="sync", PolicyName="all", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
    k = iam.create_access_key(UserName="sync")["AccessKey"]
    print(k["AccessKeyId"], k["SecretAccessKey"])
elif cmd == "put":
    ak, sk, bucket, key, path = sys.argv[3:8]
    extra = {"ChecksumAlgorithm": "SHA256"} if sys.argv[8:9] == ["sha256"] else {}
    s3 = client("s3", ak, sk)
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    with open(path, "rb") as f:
        r = s3.put_object(Bucket=bucket, Key=key, Body=f.read(), **extra)
    print(r["ETag"])
elif cmd == "delete":
    ak, sk, bucket, key = sys.argv[3:7]
    client("s3", ak, sk).delete_object(Bucket=bucket, Key=key)
elif cmd == "putmany":
    ak, sk, bucket, prefix, count, size = sys.argv[3:9]
    s3 = client("s3", ak, sk)
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    for n in range(int(count)):
        body = bytes((i * 31 + n) % 251 for i in range(int(size)))
        s3.put_object(Bucket=bucket, Key="%s%04d.bin" % (prefix, n), Body=body)
else:
    sys.exit("unknown command " + cmd)
