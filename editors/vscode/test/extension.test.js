// Loads extension.js as VS Code would, with the `vscode` module and the
// language client replaced by stand-ins that record what the extension asks
// for, and prints it as JSON: the server command, its arguments and the
// documents it serves. cmd/ptoasm's TestEditorConfigs checks them and
// starts that command as an LSP server.
'use strict';

const Module = require('module');
const path = require('path');

const recorded = {};
const settings = JSON.parse(process.argv[2] || '{}');
const stubs = {
  vscode: {
    workspace: {
      getConfiguration: (section) => ({
        get: (key, def) => (Object.prototype.hasOwnProperty.call(settings, `${section}.${key}`) ? settings[`${section}.${key}`] : def),
      }),
    },
  },
  'vscode-languageclient/node': {
    LanguageClient: class {
      constructor(id, name, serverOptions, clientOptions) {
        Object.assign(recorded, { id, name, serverOptions, clientOptions });
      }
      start() { recorded.started = true; return Promise.resolve(); }
      stop() { return Promise.resolve(); }
      dispose() {}
    },
  },
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (Object.prototype.hasOwnProperty.call(stubs, request)) return stubs[request];
  return load.call(this, request, parent, isMain);
};

// The real client module must be installed (npm ci), as the packaged
// extension needs it.
require.resolve('vscode-languageclient/node', { paths: [path.resolve(__dirname, '..')] });

const ext = require(path.resolve(__dirname, '..', 'extension.js'));
const context = { subscriptions: [] };
Promise.resolve(ext.activate(context)).then(() => {
  recorded.subscriptions = context.subscriptions.length;
  console.log(JSON.stringify(recorded));
});
