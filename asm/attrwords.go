package asm

// AttrWords is the words attribute #key= of op accepts, nil when it takes a
// number or an expression: what an editor offers after `#key=`.
func (op *OpInfo) AttrWords(key string) []string {
	if d := defOf[op]; d != nil {
		for _, a := range d.attrs {
			if a.key == key && a.kind == attrWord {
				return a.words
			}
		}
	}
	return nil
}

// CmpSymbol is the operator a `#cmp=` word stands for (eq, ne, gt, ge, lt,
// le), as messages print a signal compare: "==" for eq and anything else.
func CmpSymbol(word string) string {
	switch word {
	case "ne":
		return "!="
	case "gt":
		return ">"
	case "ge":
		return ">="
	case "lt":
		return "<"
	case "le":
		return "<="
	}
	return "=="
}
