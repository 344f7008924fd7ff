// Package packagecontext is the package-context mutation: it sets and removes
// keys in the `data` of ConfigMap "kptfile.kpt.dev" in the package's
// "package-context.yaml", the file kpt and Porch create for deployment
// packages.
//
// Behaviour (Porch v1.5.3's; rule porch-texts):
//   - every key of `data` is set (existing keys updated in place, new keys
//     appended in sorted order); then every key of `removeKeys` is removed.
//     A key listed in both ends removed, with a warning;
//   - keys set earlier but no longer listed stay unless listed in removeKeys;
//   - the reserved keys `name` and `package-path` are rejected in both lists;
//   - an empty config (no data, no removeKeys) does nothing, even when the
//     package has no package-context.yaml; but no config at all (including
//     the empty ConfigMap "function-input" kpt sends when it is given none)
//     is an error, as it is for every pvkit function;
//   - the file must hold exactly one object, a v1 ConfigMap named
//     "kptfile.kpt.dev" with a `data` map of strings; each way it can be
//     wrong has its own message naming the file.
//
// Decisions where the reference is silent:
//   - data keys are checked as ConfigMap keys (letters, digits, '-', '_',
//     '.'), so an invalid ConfigMap is never written;
//   - config values of any scalar type are taken as text and written as
//     strings ("3" stays a string in the ConfigMap);
//   - a value already equal is left untouched, so its quoting and comments
//     survive and a second run changes nothing.
package packagecontext
