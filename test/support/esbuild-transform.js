// Jest transform: TypeScript to CommonJS with esbuild (the same compiler tsx runs the app with).
// Types are checked separately by `npm run typecheck`. The few ESM-only packages the app loads
// (openid-client and what it imports: package.json "jest.transformIgnorePatterns") go through it
// too, as JavaScript, since jest's module system runs CommonJS.
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename) {
    const result = transformSync(source, {
      loader: filename.endsWith('.ts') ? 'ts' : 'js',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcefile: filename,
    });
    return { code: result.code };
  },
};
