package v1alpha2

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// IntOrPercent is a count (3) or a percent ("30%"), as Kubernetes'
// maxUnavailable and Argo CD's maxUpdate are written. Its JSON is a number
// or a string.
// +kubebuilder:validation:XIntOrString
// +kubebuilder:validation:Type=""
type IntOrPercent struct {
	Value   int  `json:"-"`
	Percent bool `json:"-"`
	// Invalid is what was written when it is neither (kept, so that
	// validation names the field instead of the decoder failing whole).
	Invalid string `json:"-"`
}

// UnmarshalJSON reads 3, "3" or "30%".
func (a *IntOrPercent) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*a = IntOrPercent{Value: n}
		if n < 0 {
			*a = IntOrPercent{Invalid: string(b)}
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		*a = IntOrPercent{Invalid: string(b)}
		return nil
	}
	p, err := ParseIntOrPercent(s)
	if err != nil {
		p = IntOrPercent{Invalid: s}
	}
	*a = p
	return nil
}

// MarshalJSON writes a count as a number and a percent as "N%".
func (a IntOrPercent) MarshalJSON() ([]byte, error) {
	if a.Invalid != "" {
		return json.Marshal(a.Invalid)
	}
	if a.Percent {
		return json.Marshal(a.String())
	}
	return json.Marshal(a.Value)
}

func (a IntOrPercent) String() string {
	if a.Percent {
		return strconv.Itoa(a.Value) + "%"
	}
	return strconv.Itoa(a.Value)
}

// ParseIntOrPercent reads "3" or "30%".
func ParseIntOrPercent(s string) (IntOrPercent, error) {
	num, pct := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return IntOrPercent{}, fmt.Errorf("%q is not a count or a percent (3, \"30%%\")", s)
	}
	return IntOrPercent{Value: n, Percent: pct}, nil
}

// Of is the amount as a count out of total: a percent rounded up.
func (a *IntOrPercent) Of(total int) int {
	if !a.Percent {
		return a.Value
	}
	return (a.Value*total + 99) / 100
}
