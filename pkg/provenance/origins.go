package provenance

import "github.com/pvkit/pvkit/pkg/variant"

// Origin is where the content of a file pvkit did not build came from
// (a person's edits are part of the record).
type Origin struct {
	// Words are the origin as the record says it: OriginEdited, or an
	// adoption's words.
	Words string
	// In is the package revision the edit was found in, Digest the file's
	// digest by meaning there (the edit as the person left it: an upgrade
	// may merge the upstream's changes into it since), ApprovedBy who
	// approved that revision where the store knows it (Porch's
	// status.publishedBy; pvctl approve's git identity); "" when not
	// known.
	In, Digest, ApprovedBy string
}

// Origins are the files pvkit did not build, by path.
type Origins map[string]Origin

// The annotations of a subject that say where a person's file came from,
// besides OriginAnnotation.
const (
	EditedInAnnotation   = "pvkit.dev/edited-in"
	EditDigestAnnotation = "pvkit.dev/edit-digest"
	ApprovedByAnnotation = "pvkit.dev/approved-by"
)

// annotations are an origin as a subject's annotations.
func (o Origin) annotations() map[string]string {
	return nonEmpty(map[string]string{OriginAnnotation: o.Words, EditedInAnnotation: o.In, EditDigestAnnotation: o.Digest, ApprovedByAnnotation: o.ApprovedBy})
}

// String is the origin in words: "edited by a person in d.app.v2,
// approved by Jane <jane@example.com>".
func (o Origin) String() string {
	s := o.Words
	if o.In != "" {
		s += " in " + o.In
	}
	if o.ApprovedBy != "" {
		s += ", approved by " + o.ApprovedBy
	}
	return s
}

// Words are the origins' words by path (nil for none).
func (o Origins) Words() map[string]string {
	if len(o) == 0 {
		return nil
	}
	out := make(map[string]string, len(o))
	for k, v := range o {
		out[k] = v.Words
	}
	return out
}

// MarkedOrigins are the files the statement says pvkit did not build, with
// everything the record says of where each came from.
func (r *Record) MarkedOrigins() Origins {
	var out Origins
	for _, s := range r.Statement.Subject {
		if w := s.Annotations[OriginAnnotation]; w != "" {
			if out == nil {
				out = Origins{}
			}
			out[s.Name] = Origin{Words: w, In: s.Annotations[EditedInAnnotation], Digest: s.Annotations[EditDigestAnnotation], ApprovedBy: s.Annotations[ApprovedByAnnotation]}
		}
	}
	return out
}

// Found names the package revision a package's files are, for the edits
// found in it: its name and who approved it ("" when not known).
type Found struct {
	Revision, ApprovedBy string
}

// PersonsOrigins are PersonsFiles with where each came from: a file the
// record marks keeps what the record says; a file modified or added since
// the record was made is a person's edit found in in, its digest as the
// package holds it.
func PersonsOrigins(files map[string]string, in Found) (Origins, bool) {
	rec, err := Read(files)
	if err != nil {
		return nil, false
	}
	origins := rec.MarkedOrigins()
	for _, c := range rec.Differences(files) {
		if c.Change == variant.FileRemoved {
			continue
		}
		if origins == nil {
			origins = Origins{}
		}
		if origins[c.Path].Words == "" {
			origins[c.Path] = Origin{Words: OriginEdited, In: in.Revision, ApprovedBy: in.ApprovedBy,
				Digest: hexOf(variant.Fingerprint(map[string]string{c.Path: files[c.Path]}))}
		}
	}
	return origins, true
}
