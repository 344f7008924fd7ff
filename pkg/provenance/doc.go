// Package provenance records where a package revision pvkit wrote came
// from, in the package itself, and checks it (rule provenance-record in
// docs/behavior.md).
//
// The record is the file pvkit-provenance.yaml at the package's root: a
// ConfigMap marked config.kubernetes.io/local-config (kpt and Config Sync
// never apply it, as package-context.yaml) whose data.statement is an
// in-toto Statement v1 with a SLSA Provenance v1 predicate, as JSON, and,
// when pvkit was given a key, data.signature: an SSH signature of that
// statement (namespace pvkit-provenance; `ssh-keygen -Y verify` checks it
// as it checks a signed git commit). Being a file of the package, Porch and
// git both carry it with the package's content, through clone, copy and
// approval.
//
// What the statement says:
//   - subject: every other file of the package, with its digest by meaning
//     (sha256ByMeaning: variant.Fingerprint of the file alone; YAML objects
//     as canonical JSON, comments and formatting left out, other files as
//     they are). By meaning, not by bytes, because Porch rewrites a draft's
//     Kptfile in its own format on every update of the revision; a change
//     of any value, key or non-YAML byte changes the digest, a comment does
//     not.
//   - buildDefinition.externalParameters: the variant (namespace, name,
//     UID, generation), its upstream and downstream as its spec names them,
//     and its whole spec as the chain read it (parameters: what a rebuild
//     needs besides the upstream and the injected objects; a record
//     written before pvkit recorded them has none);
//   - buildDefinition.resolvedDependencies: the upstream as the Kptfile's
//     upstreamLock pins it (git repository, directory, ref and commit), and
//     each injected object (the injection point's kind, the object's name,
//     the digest of the field copied in: what was read);
//   - buildDefinition.internalParameters.functions: pvkit's three mutations
//     (built in, pvkit's version, a digest of each one's config from the
//     variant), then the Kptfile pipeline's functions that rendered the
//     package (image as written, so its digest when pinned by one; a digest
//     of the config);
//   - runDetails: the builder (pvkit's controller or pvctl) and pvkit's
//     version; the package's digest (of its files' names and digests) as
//     a byproduct. No time: the same inputs
//     give the same statement, so a reconcile that changes nothing writes
//     nothing.
//
// Check compares a package with its statement and names each file changed,
// added or removed since; with an allowed_signers file it also checks the
// signature. What it cannot tell (docs/security.md): who made an unsigned
// statement; that an old but genuine statement was put back with its old
// content (the statement names the variant's generation and the upstream
// commit: compare them); anything after a signing key was stolen.
package provenance
