package responsestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// S3Client is the part of the Amazon S3 API the store uses ([WithS3]),
// with the SDK's own method signatures: *s3.Client satisfies it.
type S3Client interface {
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

var _ S3Client = (*s3.Client)(nil)

// objectKey is where the body of rec goes:
//
//	prefix + hex(SHA-256(record key)) + "/" + lease token + "/" + hex(SHA-256(body))
//
// The record key is hashed because it may be longer than S3's 1,024-byte
// limit on keys, and a hash spreads keys over S3's partitions. The lease
// token and the body's hash make the key unique to what is written: a
// COMPLETED write that is tried again after a failure, with a body
// encrypted anew, writes its own object, and never replaces the object
// that an earlier attempt's record, if it was written after all, points
// to.
func objectKey(prefix, recordKey, token string, sum [32]byte) string {
	k := sha256.Sum256([]byte(recordKey))
	return prefix + hex.EncodeToString(k[:]) + "/" + token + "/" + hex.EncodeToString(sum[:])
}

// offload writes the body of e to S3, for the record rec, and makes e
// point to it.
func (s *store) offload(ctx context.Context, rec *idempotency.Record, e *envelope) error {
	sum := sha256.Sum256(e.body)
	obj := object{bucket: s.bucket, key: objectKey(s.prefix, rec.Key, rec.LeaseToken, sum), size: len(e.body), sum: sum}
	_, err := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(obj.bucket),
		Key:           aws.String(obj.key),
		Body:          bytes.NewReader(e.body),
		ContentLength: aws.Int64(int64(obj.size)),
		ContentType:   aws.String("application/octet-stream"),
		// S3 checks the body against the hash the record will hold.
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:])),
	})
	if err != nil {
		return fmt.Errorf("s3 PutObject s3://%s/%s: %w", obj.bucket, obj.key, err)
	}
	e.flags |= flagS3
	e.body, e.object = nil, obj
	return nil
}

// fetch reads the object e points to, and checks its length and SHA-256.
// An object that is missing or not what the record says makes the record
// corrupted.
func (s *store) fetch(ctx context.Context, key string, e *envelope) ([]byte, error) {
	obj := e.object
	where := "s3://" + obj.bucket + "/" + obj.key
	if s.s3 == nil {
		return nil, corrupted(key, "the response is in %s, and the store has no S3 client (WithS3)", where)
	}
	out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(obj.bucket), Key: aws.String(obj.key)})
	if err != nil {
		if _, ok := errors.AsType[*types.NoSuchKey](err); ok {
			return nil, corrupted(key, "the response's object %s is missing (deleted, or a lifecycle rule shorter than the record's expiry)", where)
		}
		return nil, fmt.Errorf("s3 GetObject %s: %w", where, err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(io.LimitReader(out.Body, int64(obj.size)+1))
	if err != nil {
		return nil, fmt.Errorf("s3 GetObject %s: %w", where, err)
	}
	if len(body) != obj.size {
		return nil, corrupted(key, "the response's object %s is not the %d bytes the record says", where, obj.size)
	}
	if sha256.Sum256(body) != obj.sum {
		return nil, corrupted(key, "the response's object %s does not have the SHA-256 the record says", where)
	}
	return body, nil
}
