package pipelineprepend

import (
	"strconv"
	"strings"
)

// Prefix starts every name pipeline-prepend gives a function.
const Prefix = "PackageVariant"

// FunctionName is the name of the index-th function of owner's list:
// `PackageVariant.<owner>.<function name>.<index>`.
func FunctionName(owner, fnName string, index int) string {
	return Prefix + "." + owner + "." + fnName + "." + strconv.Itoa(index)
}

// Owns reports whether name was given by FunctionName for owner. Owner and
// function names may both contain dots (rule: dotted-owners): the name must start with
// `PackageVariant.<owner>.` and end with `.<digits>`.
func Owns(owner, name string) bool {
	rest, ok := strings.CutPrefix(name, Prefix+"."+owner+".")
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || i == len(rest)-1 {
		return false
	}
	for _, c := range rest[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
