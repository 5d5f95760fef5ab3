// extensionTestsPath entry: runs the mocha suite inside VS Code's real extension host.
import * as path from 'path';
import * as fs from 'fs';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 45000, color: false, reporter: 'spec' });
  const grep = process.env.BPROP_TEST_GREP;
  if (grep) {
    mocha.grep(grep);
  }
  for (const f of fs.readdirSync(__dirname).sort()) {
    if (f.endsWith('.test.js')) {
      mocha.addFile(path.join(__dirname, f));
    }
  }
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
}
