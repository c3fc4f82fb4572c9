package responsestore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// checkObject is the object, under the object prefix, that the check of
// [WithS3] reads: no response is ever stored there, so S3 answers that it
// does not exist.
const checkObject = "responsestore-check"

// Error codes with which KMS refuses a key for good: a key or alias that
// does not exist, a disabled key or one pending deletion, a key not for
// encryption, and a role, key policy or encryption context that does not
// allow the function to use it.
var kmsRefusals = []string{"NotFoundException", "DisabledException", "KMSInvalidStateException", "InvalidKeyUsageException", "AccessDeniedException"}

// Error codes with which S3 refuses a bucket for good: a bucket that does
// not exist, a role that may not read the prefix (or list the bucket,
// without which S3 answers a missing object with AccessDenied), a bucket
// in another Region than the client's.
var s3Refusals = []string{"NoSuchBucket", "AccessDenied", "PermanentRedirect", "AuthorizationHeaderMalformed"}

// check asks KMS and S3, with one request each, whether the function can
// use the key of [WithKMS] and the bucket of [WithS3], before the store's
// first Acquire (in Lambda, the first invocation after a cold start) and
// each after until it passes, so that a wrong one is found before any
// record is written, not by each response that then cannot be stored:
//
//   - KMS: GenerateDataKey with the key and the encryption context, which
//     every response needs anyway; the data key is kept, and the first
//     responses use it. It needs no permission beyond what encrypting
//     needs (kms:GenerateDataKey).
//   - S3: GetObject of checkObject under the prefix, which writes nothing
//     and which S3 answers with NoSuchKey. It needs what reading a
//     response needs: s3:GetObject on the prefix, and s3:ListBucket on
//     the bucket. A role that may read but not write is found by the
//     first offload.
//
// A refusal (kmsRefusals, s3Refusals) is a [*idempotency.ConfigError];
// any other failure is returned wrapped: the service could not say.
func (s *store) check(ctx context.Context) error {
	if k, ok := s.sealer.(*kmsSealer); ok {
		if err := k.check(ctx); err != nil {
			return checkError("responsestore.WithKMS", kmsRefusals,
				fmt.Errorf("the key %q, with the encryption context %s=%s: %w", k.keyID, EncryptionContextKey, s.function, err))
		}
	}
	if s.s3 != nil {
		key := s.prefix + checkObject
		out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
		if _, missing := errors.AsType[*s3types.NoSuchKey](err); err != nil && !missing {
			return checkError("responsestore.WithS3", s3Refusals,
				fmt.Errorf("the bucket %q: s3 GetObject %s: %w", s.bucket, key, err))
		}
		if err == nil {
			out.Body.Close()
		}
	}
	return nil
}

// checkError is err of a check: a [*idempotency.ConfigError] for option
// when the service refused with one of the codes refusals, else err.
func checkError(option string, refusals []string, err error) error {
	if api, ok := errors.AsType[smithy.APIError](err); ok && slices.Contains(refusals, api.ErrorCode()) {
		return &idempotency.ConfigError{Name: option, Err: err}
	}
	return fmt.Errorf("responsestore: checking %s: %w", option, err)
}
