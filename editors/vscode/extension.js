// The ptoasm extension: highlighting comes from the TextMate grammar in
// syntaxes/; everything else (diagnostics, hover, navigation, completion,
// inlay hints, quick fixes, formatting) from `ptoasm lsp` over stdio.
'use strict';

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const cfg = vscode.workspace.getConfiguration('ptoasm');
  const command = cfg.get('path', 'ptoasm');
  const args = ['lsp', ...cfg.get('lspArgs', [])];
  client = new LanguageClient(
    'ptoasm',
    'ptoasm lsp',
    { command, args },
    { documentSelector: [{ scheme: 'file', language: 'pto' }, { scheme: 'untitled', language: 'pto' }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
