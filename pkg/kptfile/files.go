package kptfile

import (
	"github.com/pvkit/pvkit/pkg/krm"
)

// FromFiles reads the root Kptfile of a package (file name -> content);
// nil when the package has none.
func FromFiles(files map[string]string) (*Kptfile, error) {
	items, err := krm.FilesToItems(map[string]string{FileName: files[FileName]})
	if err != nil {
		return nil, err
	}
	return Find(items)
}

// Edit applies edit to the package's root Kptfile and writes it back into
// files (which it changes and returns); a package without a Kptfile is
// returned as it is. An edit that changes nothing semantically keeps the
// file's bytes.
func Edit(files map[string]string, edit func(*Kptfile) error) (map[string]string, error) {
	if _, ok := files[FileName]; !ok {
		return files, nil
	}
	orig := map[string]string{FileName: files[FileName]}
	items, err := krm.FilesToItems(orig)
	if err != nil {
		return nil, err
	}
	kf, err := Find(items)
	if err != nil || kf == nil {
		return files, err
	}
	if err := edit(kf); err != nil {
		return nil, err
	}
	out, err := krm.ItemsToFiles(items, orig)
	if err != nil {
		return nil, err
	}
	files[FileName] = out[FileName]
	return files, nil
}

// NotReady returns the first readiness gate whose condition is not True
// (kpt's, porchctl's and Nephio's rule for approval) and that condition
// (nil when the gate has none); gate "" when every gate is True.
func (k *Kptfile) NotReady() (gate string, cond *Condition, err error) {
	gates, err := k.ReadinessGates()
	if err != nil {
		return "", nil, err
	}
	conds, err := k.Conditions()
	if err != nil {
		return "", nil, err
	}
	byType := make(map[string]Condition, len(conds))
	for _, c := range conds {
		byType[c.Type] = c
	}
	for _, g := range gates {
		c, ok := byType[g]
		switch {
		case !ok:
			return g, nil, nil
		case c.Status != ConditionTrue:
			return g, &c, nil
		}
	}
	return "", nil, nil
}
