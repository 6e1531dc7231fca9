// dsse-verify: an independent check of a faultkit evidence bundle's attestation, written against
// secure-systems-lab's Go library rather than faultkit's Python, so a bug in one is caught by the
// other.
//
//	dsse-verify -key validator.pub [-bundle DIR] ENVELOPE
//
// It verifies the DSSE envelope's ed25519 signature with the public key (PEM), checks that the
// payload is an in-toto Statement v1, and prints the statement's subjects, one per line:
// "sha256:<hex>  <name>". With -bundle it also checks that every subject is a file of DIR with that
// digest and that DIR holds no other file (the envelope and derived files named by -ignore aside).
// Exit 0: verified; 1: refused, with one line on stderr saying why.
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/secure-systems-lab/go-securesystemslib/signerverifier"
)

const (
	payloadType   = "application/vnd.in-toto+json"
	statementType = "https://in-toto.io/Statement/v1"
	maxEnvelope   = 16 << 20
)

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

type statement struct {
	Type          string    `json:"_type"`
	Subject       []subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
}

func main() {
	key := flag.String("key", "", "the validator's ed25519 public key (PEM)")
	bundle := flag.String("bundle", "", "check the subjects against this bundle folder's files")
	ignore := flag.String("ignore", "SIGNATURE.json,labels.json", "with -bundle: files not attested (comma list)")
	flag.Parse()
	if *key == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: dsse-verify -key KEY.pub [-bundle DIR] ENVELOPE")
		os.Exit(2)
	}
	st, keyid, err := verify(*key, flag.Arg(0))
	if err == nil && *bundle != "" {
		err = checkBundle(*bundle, st.Subject, strings.Split(*ignore, ","))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dsse-verify: %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	fmt.Printf("verified: signed by %s, predicateType %s, %d subjects\n", keyid, st.PredicateType, len(st.Subject))
	for _, s := range st.Subject {
		fmt.Printf("sha256:%s  %s\n", s.Digest["sha256"], s.Name)
	}
}

// verify checks the envelope's signature with the key and returns its statement and the key's
// fingerprint (faultkit's keyid: "ed25519:" + sha256 of the raw 32-byte public key).
func verify(keyPath, envelopePath string) (*statement, string, error) {
	pem, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, "", err
	}
	key, err := signerverifier.LoadKey(pem)
	if err != nil {
		return nil, "", fmt.Errorf("%s: not a PEM public key: %w", keyPath, err)
	}
	if key.KeyType != signerverifier.ED25519KeyType {
		return nil, "", fmt.Errorf("%s: a %s key, not ed25519", keyPath, key.KeyType)
	}
	raw, err := hex.DecodeString(key.KeyVal.Public)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, "", fmt.Errorf("%s: not an ed25519 public key", keyPath)
	}
	sum := sha256.Sum256(raw)
	key.KeyID = "ed25519:" + hex.EncodeToString(sum[:])
	verifier, err := signerverifier.NewED25519SignerVerifierFromSSLibKey(key)
	if err != nil {
		return nil, "", err
	}
	env, err := readEnvelope(envelopePath)
	if err != nil {
		return nil, "", err
	}
	ev, err := dsse.NewEnvelopeVerifier(verifier)
	if err != nil {
		return nil, "", err
	}
	_, payload, err := ev.VerifyAndDecode(context.Background(), env)
	if err != nil {
		return nil, "", fmt.Errorf("signature not verified by %s: %w", key.KeyID, err)
	}
	if env.PayloadType != payloadType {
		return nil, "", fmt.Errorf("payloadType %q, expected %q", env.PayloadType, payloadType)
	}
	var st statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, "", fmt.Errorf("payload is not an in-toto statement: %w", err)
	}
	if st.Type != statementType {
		return nil, "", fmt.Errorf("_type %q, expected %q", st.Type, statementType)
	}
	return &st, key.KeyID, nil
}

func readEnvelope(path string) (*dsse.Envelope, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || info.Size() > maxEnvelope {
		return nil, errors.New("not a regular file under 16 MiB")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var env dsse.Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("not a DSSE envelope: %w", err)
	}
	return &env, nil
}

// checkBundle: every subject is a regular file of dir with its digest, and every other regular
// file of dir is one of the ignored names.
func checkBundle(dir string, subjects []subject, ignore []string) error {
	want := map[string]string{}
	for _, s := range subjects {
		want[s.Name] = s.Digest["sha256"]
	}
	skip := map[string]bool{}
	for _, name := range ignore {
		skip[name] = true
	}
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", rel)
		}
		if !skip[rel] {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(found)
	for _, rel := range found {
		digest, ok := want[rel]
		if !ok {
			return fmt.Errorf("%s is in the bundle but not attested", rel)
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != digest {
			return fmt.Errorf("%s: digest mismatch with the attestation", rel)
		}
		delete(want, rel)
	}
	missing := make([]string, 0, len(want))
	for name := range want {
		missing = append(missing, name)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		return fmt.Errorf("%s is attested but not in the bundle", missing[0])
	}
	return nil
}
