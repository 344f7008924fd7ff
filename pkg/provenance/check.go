package provenance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/variant"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxStatement bounds the statement read from a package (a package of
// thousands of files makes one of well under a megabyte).
const maxStatement = 4 << 20

// ErrNoRecord: the package has no record (pvkit-provenance.yaml).
var ErrNoRecord = errors.New("the package has no provenance record (" + FileName + ")")

// Record is a package's record as read: the statement's bytes as signed,
// the signature ("" when unsigned) and the statement parsed.
type Record struct {
	Raw       []byte
	Signature []byte
	Statement *Statement
}

// Read reads a package's record. A record that does not parse, holds no
// statement or another kind of statement is an error naming the file and
// field.
func Read(files map[string]string) (*Record, error) {
	text, ok := files[FileName]
	if !ok {
		return nil, ErrNoRecord
	}
	if len(text) > maxStatement {
		return nil, fmt.Errorf("%s: %d bytes, more than a record may have (%d)", FileName, len(text), maxStatement)
	}
	n, err := yaml.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", FileName, err)
	}
	if err := krm.CheckAliases(n.YNode()); err != nil {
		return nil, fmt.Errorf("%s: %w", FileName, err)
	}
	if apiVersion, kind := krm.TypeMeta(n.YNode()); apiVersion != "v1" || kind != "ConfigMap" || krm.Name(n.YNode()) != ObjectName {
		return nil, fmt.Errorf("%s: not the ConfigMap %s (found %s %s %q)", FileName, ObjectName, apiVersion, kind, krm.Name(n.YNode()))
	}
	stmt, _ := krm.ScalarAt(n.YNode(), "data", "statement")
	if stmt == "" {
		return nil, fmt.Errorf("%s: field data.statement is missing or empty", FileName)
	}
	rec := &Record{Raw: []byte(stmt), Statement: &Statement{}}
	sig, _ := krm.ScalarAt(n.YNode(), "data", "signature")
	rec.Signature = []byte(sig)
	dec := json.NewDecoder(strings.NewReader(stmt))
	dec.DisallowUnknownFields()
	if err := dec.Decode(rec.Statement); err != nil {
		return nil, fmt.Errorf("%s: field data.statement: %w", FileName, err)
	}
	if st := rec.Statement; st.Type != StatementType || st.PredicateType != PredicateType || st.Predicate.BuildDefinition.BuildType != BuildType {
		return nil, fmt.Errorf("%s: field data.statement: not pvkit's statement (_type %q, predicateType %q, buildType %q)", FileName, st.Type, st.PredicateType, st.Predicate.BuildDefinition.BuildType)
	}
	return rec, nil
}

// Differences lists the files of a package that differ from what its
// statement says, by path: modified, added (not in the statement) and
// removed (in it, not in the package). None: the content is what the
// statement says.
func (r *Record) Differences(files map[string]string) []variant.FileChange {
	recorded := map[string]string{}
	for _, s := range r.Statement.Subject {
		recorded[s.Name] = s.Digest[DigestAlgorithm]
	}
	now := map[string]string{}
	for name, d := range variant.FileDigests(WithoutRecord(files)) {
		now[name] = hexOf(d)
	}
	return variant.ChangedFiles(recorded, now)
}

// For reports whether the record was written for the package revision
// name (false for a record that names none: written before records named
// their revision).
func (r *Record) For(name string) bool {
	ref := r.Statement.Predicate.BuildDefinition.ExternalParameters.Revision
	return ref != nil && ref.Name == name
}

// Describes checks that the record was written for the package revision
// want, by name; for a branch placeholder (branch), for any revision of
// want's repository and package (the branch holds the package's newest
// published revision). A record of before records named their revision is
// held to its downstream, repository and package. The error names what the
// record names (a record copied from another package, or
// from another revision, vouches for nothing here).
func (r *Record) Describes(want RevisionRef, branch bool) error {
	ext := r.Statement.Predicate.BuildDefinition.ExternalParameters
	if ref := ext.Revision; ref != nil {
		if ref.Name == want.Name || branch && ref.Repository == want.Repository && ref.Package == want.Package {
			return nil
		}
		return fmt.Errorf("%s: the record was written for package revision %s (repository %s, package %s), not %s", FileName, ref.Name, ref.Repository, ref.Package, want.Name)
	}
	if repo, pkg := ext.Downstream["repo"], ext.Downstream["package"]; repo != want.Repository || pkg != want.Package {
		return fmt.Errorf("%s: the record was written for package %s in repository %s, not %s", FileName, pkg, repo, want.Name)
	}
	return nil
}

// Marked are the files the statement says pvkit did not build
// (OriginAnnotation), by path, with their origin.
func (r *Record) Marked() map[string]string {
	var out map[string]string
	for _, s := range r.Statement.Subject {
		if o := s.Annotations[OriginAnnotation]; o != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[s.Name] = o
		}
	}
	return out
}

// PersonsFiles are the files of a package that are not pvkit's build, as
// its record tells, by path, with their origin: those the statement marks
// so (Marked), and those modified or added since it was made (a person's
// edit: OriginEdited). known is false when the package has no record that
// reads (then nothing can be told from it).
func PersonsFiles(files map[string]string) (origins map[string]string, known bool) {
	o, known := PersonsOrigins(files, Found{})
	return o.Words(), known
}

// Verifier checks a signature of a statement (sshsig.Verify with an
// allowed_signers file, in the caller) and names the key that made it.
type Verifier func(statement, signature []byte) (signer string, err error)

// Result is Check's answer.
type Result struct {
	Record *Record
	// Signer names the key that signed the statement ("" when not checked).
	Signer string
}

// Check checks that a package's content is what its record says and, when
// verify is not nil, that the record is signed by an allowed key. The
// error names the record's problem or each file that differs (at most
// ten), how, and the command that shows the change.
func Check(files map[string]string, verify Verifier) (*Result, error) {
	rec, err := Read(files)
	if err != nil {
		return nil, err
	}
	res := &Result{Record: rec}
	if diffs := rec.Differences(files); len(diffs) > 0 {
		return res, &ContentError{Changes: diffs}
	}
	if verify == nil {
		return res, nil
	}
	if len(rec.Signature) == 0 {
		return res, fmt.Errorf("%s: the statement is not signed (field data.signature is missing)", FileName)
	}
	if res.Signer, err = verify(rec.Raw, rec.Signature); err != nil {
		return res, fmt.Errorf("%s: field data.signature: %w", FileName, err)
	}
	return res, nil
}

// ContentError is a package whose files differ from its statement.
type ContentError struct {
	Changes []variant.FileChange
}

func (e *ContentError) Error() string {
	var parts []string
	for i, c := range e.Changes {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Changes)-10))
			break
		}
		parts = append(parts, c.Path+" ("+c.Change+")")
	}
	return fmt.Sprintf("the package differs from its provenance statement (%s): %s", FileName, strings.Join(parts, ", "))
}
