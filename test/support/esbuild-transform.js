// Jest transform: TypeScript to CommonJS with esbuild (the same compiler tsx runs the app with).
// Types are checked separately by `npm run typecheck`.
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename) {
    const result = transformSync(source, {
      loader: 'ts',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcefile: filename,
    });
    return { code: result.code };
  },
};
