// Validates glTF files with the Khronos glTF-Validator and prints a summary per file.
// Usage: node validate.js FILE...   Exit status: 0 when no file has errors, 1 otherwise,
// 2 on a usage or loading problem. Set GLTF_VALIDATOR_JSON=1 to print the full reports.
'use strict';
const fs = require('fs');
const path = require('path');

const modulesDir = process.env.GLTF_VALIDATOR_MODULES;
let validator;
try {
  validator = require(modulesDir ? path.join(modulesDir, 'gltf-validator') : 'gltf-validator');
} catch (e) {
  console.error('validate-gltf: cannot load the gltf-validator package: ' + e.message);
  process.exit(2);
}

async function validate(file) {
  const full = path.resolve(file);
  const bytes = new Uint8Array(fs.readFileSync(full));
  const report = await validator.validateBytes(bytes, {
    uri: path.basename(full),
    maxIssues: 0,
    externalResourceFunction: (uri) =>
      new Promise((resolve, reject) => {
        fs.readFile(path.resolve(path.dirname(full), decodeURIComponent(uri)), (err, data) =>
          err ? reject(err.toString()) : resolve(new Uint8Array(data)));
      }),
  });
  const issues = report.issues;
  const codes = {};
  for (const m of issues.messages) {
    const key = ['E', 'W', 'I', 'H'][m.severity] + ':' + m.code;
    codes[key] = (codes[key] || 0) + 1;
  }
  console.log(`${file}: errors=${issues.numErrors} warnings=${issues.numWarnings} infos=${issues.numInfos} ` +
    `hints=${issues.numHints} ${JSON.stringify(codes)}`);
  for (const m of issues.messages.filter((m) => m.severity === 0).slice(0, 20)) {
    console.log(`  error ${m.code} at ${m.pointer || '-'}: ${m.message}`);
  }
  if (process.env.GLTF_VALIDATOR_JSON === '1') {
    console.log(JSON.stringify(report, null, 2));
  }
  return issues.numErrors;
}

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: validate.js FILE...');
    process.exit(2);
  }
  let failed = 0;
  for (const f of files) {
    try {
      if ((await validate(f)) > 0) failed++;
    } catch (e) {
      console.error(`${f}: cannot validate: ${e}`);
      failed++;
    }
  }
  process.exit(failed > 0 ? 1 : 0);
})();
