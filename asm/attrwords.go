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
