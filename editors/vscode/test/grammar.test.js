// Tests the TextMate grammar with the engine VS Code uses (vscode-textmate
// on the Oniguruma WebAssembly build) against every shipped program:
//
//   1. no character of any program is left unscoped: each non-blank
//      character gets a scope beyond the file's own; and the first word of
//      every PTO-AS line is classified (a keyword, mnemonic, label, ...),
//      not just a name, so the grammar knows every statement the programs
//      spell: an unknown mnemonic would show up here;
//   2. every scope name the grammar can give occurs somewhere, so no rule
//      is dead and every token class is exercised;
//   3. chosen tokens get the scope they should (a table below).
//
// Usage: node test/grammar.test.js ROOT FILE... (the Go test passes the
// repository root and the programs; with no FILE it finds them itself).
'use strict';

const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const here = path.resolve(__dirname, '..');
const root = path.resolve(process.argv[2] || path.join(here, '..', '..'));
let files = process.argv.slice(3);
if (files.length === 0) {
  const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.pto') ? [path.join(dir, e.name)] : []);
  files = walk(path.join(root, 'programs')).concat([path.join(root, 'cmd/ptoasm/testdata/dn_mlir.pto')]);
}

const grammarPath = path.join(here, 'syntaxes', 'pto.tmLanguage.json');
const grammarJSON = JSON.parse(fs.readFileSync(grammarPath, 'utf8'));

// Chosen tokens: in FILE, on the first line containing LINE, the token whose
// text is TOKEN has a scope starting with SCOPE.
const chosen = [
  ['programs/ffn_grid/unified_as_shipped.pto', 'mm: tmatmul.acc %cDown', 'mm', 'entity.name.label.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'mm: tmatmul.acc %cDown', 'tmatmul.acc', 'entity.name.function.mnemonic.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'mm: tmatmul.acc %cDown', '%cDown', 'variable.other.register.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'mm: tmatmul.acc %cDown', 'init', 'entity.other.attribute-name.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'set_flag MTE2, MTE1, %nb', 'MTE2', 'constant.language.pipe.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'wait_flag M, FIX, 0', 'M', 'constant.language.pipe.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'wait_flag M, FIX, 0', '0', 'constant.numeric.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'for %j = 0 to CHUNKS', 'for', 'keyword.control.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'for %j = 0 to CHUNKS', 'to', 'keyword.control.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'for %j = 0 to CHUNKS', 'CHUNKS', 'variable.other.constant.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'expect finding WAR at consume, gather', 'WAR', 'constant.other.finding-kind.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'expect finding WAR at consume, gather', 'gather', 'entity.name.label.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'publish: tstore @Win[%cell, 0, 0]', '@Win', 'variable.other.tensor.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', '// 8. Drain the accumulator', '// 8. Drain the accumulator to L1, then store this cell\'s [T, Hc] output.', 'comment.line.double-slash.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'run cell blocks=CELLS', 'cell', 'entity.name.function.kernel.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'run cell blocks=CELLS', 'blocks', 'variable.parameter.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'tlrelu %gateF32, %gateF32, 0.1', '0.1', 'constant.numeric.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'expect @Y == cast(matmul(', 'matmul', 'support.function.pto'],
  ['programs/ffn_grid/unified_as_shipped.pto', 'expect @Y == cast(matmul(', '==', 'keyword.operator.pto'],
  ['programs/allgather_gemm/allgather_gemm.pto', 'include "common.pto"', '"common.pto"', 'string.quoted.double.pto'],
  ['programs/allgather_gemm/allgather_gemm.pto', 'include "common.pto"', 'include', 'keyword.control.import.pto'],
  ['programs/allgather_gemm/allgather_gemm.pto', 'const MODE = all', 'const', 'storage.type.const.pto'],
  ['programs/allgather_gemm/allgather_gemm.pto', 'const MODE = all', 'MODE', 'variable.other.constant.declaration.pto'],
  ['programs/vec_add/vec_add.pto', 'kernel vadd : aiv {', 'vadd', 'entity.name.function.kernel.pto'],
  ['programs/vec_add/vec_add.pto', 'kernel vadd : aiv {', 'aiv', 'storage.modifier.core.pto'],
  ['programs/vec_add/vec_add.pto', 'gm X : f32 [ROWS, COLS] = random(', 'f32', 'support.type.dtype.pto'],
  ['programs/vec_add/vec_add.pto', 'gm X : f32 [ROWS, COLS] = random(', 'random', 'support.function.init.pto'],
  ['programs/vec_add/vec_add.pto', 'gm X : f32 [ROWS, COLS] = random(', 'gm', 'storage.type.tensor.pto'],
  ['cmd/ptoasm/testdata/dn_mlir.pto', 'pto.tload ins(', 'tload', 'entity.name.function.mnemonic.pto'],
  ['cmd/ptoasm/testdata/dn_mlir.pto', 'pto.set_flag[<PIPE_MTE2>', 'PIPE_MTE2', 'constant.language.pipe.pto'],
  ['cmd/ptoasm/testdata/dn_mlir.pto', 'pto.set_flag[<PIPE_MTE2>', 'EVENT_ID0', 'constant.numeric.event.pto'],
  ['cmd/ptoasm/testdata/dn_mlir.pto', '%t = pto.alloc_tile : !pto.tile_buf', '!pto.tile_buf', 'storage.type.mlir.pto'],
  ['cmd/ptoasm/testdata/dn_mlir.pto', 'func.func @scale(', 'func.func', 'keyword.other.op.mlir.pto'],
];

// Every scope name the grammar can assign ("name" anywhere in it).
function scopeNames(node, out) {
  if (Array.isArray(node)) node.forEach((n) => scopeNames(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'name' && typeof v === 'string' && node !== grammarJSON) out.add(v);
      else scopeNames(v, out);
    }
  }
  return out;
}

async function main() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => scope === 'source.pto' ? vsctm.parseRawGrammar(JSON.stringify(grammarJSON), grammarPath) : null,
  });
  const grammar = await registry.loadGrammar('source.pto');

  const failures = [];
  const seen = new Set();
  const tokenized = new Map(); // relative path -> [{line, tokens:[{text, scopes}]}]
  let lines = 0;
  for (const file of files) {
    const rel = path.relative(root, file).split(path.sep).join('/');
    const text = fs.readFileSync(file, 'utf8').replace(/\r\n/g, '\n');
    let stack = vsctm.INITIAL;
    const out = [];
    text.split('\n').forEach((line, i) => {
      const r = grammar.tokenizeLine(line, stack);
      stack = r.ruleStack;
      const toks = r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes, start: t.startIndex }));
      for (const t of toks) {
        t.scopes.forEach((s) => seen.add(s));
        const specific = t.scopes.filter((s) => s !== 'source.pto' && s !== 'meta.mlir.pto');
        if (specific.length === 0 && /\S/.test(t.text)) {
          failures.push(`${rel}:${i + 1}:${t.start + 1}: unscoped ${JSON.stringify(t.text.trim())} in: ${line.trim()}`);
        }
      }
      const first = toks.find((t) => /\S/.test(t.text));
      if (first && !first.scopes.includes('meta.mlir.pto') && first.scopes.includes('variable.other.name.pto')) {
        failures.push(`${rel}:${i + 1}: the first word ${JSON.stringify(first.text.trim())} is not classified: ${line.trim()}`);
      }
      out.push({ line, tokens: toks });
      lines++;
    });
    tokenized.set(rel, out);
  }

  for (const name of scopeNames(grammarJSON, new Set())) {
    if (!seen.has(name)) failures.push(`scope ${name} occurs in no program: a token class the programs do not exercise`);
  }

  for (const [rel, frag, token, scope] of chosen) {
    const doc = tokenized.get(rel);
    if (!doc) { failures.push(`${rel}: not among the files tested`); continue; }
    const l = doc.find((d) => d.line.includes(frag));
    if (!l) { failures.push(`${rel}: no line contains ${JSON.stringify(frag)}`); continue; }
    const t = l.tokens.find((t) => t.text.trim() === token);
    if (!t) {
      failures.push(`${rel}: ${JSON.stringify(token)} is not one token in ${JSON.stringify(l.line.trim())}: ${JSON.stringify(l.tokens.map((t) => t.text))}`);
    } else if (!t.scopes.some((s) => s.startsWith(scope))) {
      failures.push(`${rel}: ${JSON.stringify(token)} has scopes ${t.scopes.join(' ')}, want ${scope}`);
    }
  }

  if (failures.length > 0) {
    console.log(failures.slice(0, 60).join('\n'));
    if (failures.length > 60) console.log(`... and ${failures.length - 60} more`);
    console.log(`FAIL: ${failures.length} problems in ${files.length} files`);
    process.exit(1);
  }
  console.log(`ok: ${files.length} files, ${lines} lines, ${seen.size} scopes, ${chosen.length} chosen tokens`);
}

main().catch((e) => { console.error(e); process.exit(2); });
