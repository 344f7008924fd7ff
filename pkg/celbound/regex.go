package celbound

import (
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Regular expressions (`matches`) cost what their compiled program does.
// RE2 runs in time linear in the input, but the factor is the size of the
// compiled program, not of the pattern: `a{0,1000}` is 9 characters and
// 2,000 instructions, and one call cannot be interrupted (a 282-character
// expression ran 62.7 s while a 1 s deadline waited). So pvkit's own
// `matches` (the standard one is left out of the environment):
//   - refuses a pattern whose program has more than MaxRegexInsts
//     instructions: at validation when the pattern is a literal, at run time
//     otherwise;
//   - refuses, before running it, a match whose work (input length x
//     program size) is over MaxRegexWork, so one call is bounded in time;
//   - is charged that work (x traversalCostFactor) by the cost estimator
//     and at run time, like every other string function.
const (
	MaxRegexInsts = 1000
	// MaxRegexWork is input bytes x instructions, the work of one evaluation's
	// whole cost budget (CostLimit / TraversalCostFactor): about 60 ms,
	// measured (make bench-security).
	MaxRegexWork = 10_000_000
)

// RegexProgram compiles pattern as Go's regexp does and returns it with the
// size of its program, or an error naming the bound it breaks.
func RegexProgram(pattern string) (*regexp.Regexp, int, error) {
	if v, ok := regexCache.Get(pattern); ok {
		r := v.(compiledRegex)
		return r.re, r.insts, r.err
	}
	re, insts, err := compileRegex(pattern)
	regexCache.Put(pattern, compiledRegex{re, insts, err}, len(pattern)*8+int(insts)*32+256)
	return re, insts, err
}

type compiledRegex struct {
	re    *regexp.Regexp
	insts int
	err   error
}

func compileRegex(pattern string) (*regexp.Regexp, int, error) {
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, 0, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, 0, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	if n := len(prog.Inst); n > MaxRegexInsts {
		return nil, n, fmt.Errorf("regular expression %q compiles to %d instructions, more than %d (counted repetitions such as {0,1000} multiply its size)", pattern, n, MaxRegexInsts)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, 0, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	return re, len(prog.Inst), nil
}

// regexCache keeps compiled patterns, refusals included, within a byte
// budget.
var regexCache = NewCache(8 << 20)

// matchesFunction is `matches`, global and member, with the bounds above.
func matchesFunction() cel.EnvOption {
	return cel.Function(overloads.Matches,
		cel.Overload(overloads.Matches, []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType),
		cel.MemberOverload(overloads.MatchesString, []*cel.Type{cel.StringType, cel.StringType}, cel.BoolType),
		cel.SingletonBinaryBinding(boundedMatch))
}

func boundedMatch(str, pat ref.Val) ref.Val {
	s, ok1 := str.(types.String)
	p, ok2 := pat.(types.String)
	if !ok1 || !ok2 {
		return types.MaybeNoSuchOverloadErr(pat)
	}
	re, insts, err := RegexProgram(string(p))
	if err != nil {
		return types.NewErr("%v", err)
	}
	if work := len(s) * insts; work > MaxRegexWork {
		return types.NewErr("matching %d characters against regular expression %q (%d instructions) is too expensive: %d, the limit is %d", len(s), string(p), insts, work, MaxRegexWork)
	}
	return types.Bool(re.MatchString(string(s)))
}

// RegexWork is the static cost of a match: the input's size bound times the
// pattern's program (MaxRegexInsts when the pattern is not a literal).
func RegexWork(input uint64, pattern *ast.Expr) uint64 {
	insts := uint64(MaxRegexInsts)
	if pattern != nil && (*pattern).Kind() == ast.LiteralKind {
		if lit, ok := (*pattern).AsLiteral().(types.String); ok {
			if _, n, err := RegexProgram(string(lit)); err == nil {
				insts = uint64(n)
			}
		}
	}
	return MulSat(input, insts)
}

// regexLiterals refuses, at validation, a literal pattern that does not
// compile or breaks the program bound, naming it.
type regexLiterals struct{}

func (regexLiterals) Name() string { return "pvkit.validator.matches" }

func (regexLiterals) Validate(_ *cel.Env, _ cel.ValidatorConfig, a *ast.AST, iss *cel.Issues) {
	for _, call := range ast.MatchDescendants(ast.NavigateAST(a), ast.FunctionMatcher(overloads.Matches)) {
		args := call.AsCall().Args()
		i := 1
		if call.AsCall().IsMemberFunction() {
			i = 0
		}
		if len(args) <= i || args[i].Kind() != ast.LiteralKind {
			continue
		}
		lit, ok := args[i].AsLiteral().(types.String)
		if !ok {
			continue
		}
		if _, _, err := RegexProgram(string(lit)); err != nil {
			iss.ReportErrorAtID(args[i].ID(), "%v", err)
		}
	}
}
