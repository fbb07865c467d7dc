import fs from 'node:fs';
import path from 'node:path';
import { chartCrdTemplates, crdsYaml } from '@hearth/core/manifests';
import { CliError, emit, print } from '../output';

/**
 * `hearth crds`: the CustomResourceDefinitions of every Hearth kind, generated from the manifest
 * schemas. Without options, all of them as one YAML stream (`hearth crds | kubectl apply -f -`);
 * with `--chart DIR`, the chart's CRD templates rewritten (`make crds`), needs no database.
 */
export async function runCrds(opts: { chart?: string; json?: boolean }): Promise<void> {
  if (!opts.chart) {
    print(crdsYaml());
    return;
  }
  if (!fs.existsSync(path.join(opts.chart, 'templates'))) throw new CliError(`--chart ${opts.chart} is not a chart (no templates folder)`);
  const files = chartCrdTemplates();
  const dir = path.join(opts.chart, path.dirname([...files.keys()][0]));
  fs.mkdirSync(dir, { recursive: true });
  // Files of kinds that no longer exist go too, so the folder is exactly what the schemas say.
  for (const stale of fs.readdirSync(dir)) {
    if (![...files.keys()].some((file) => path.basename(file) === stale)) fs.rmSync(path.join(dir, stale));
  }
  const written: string[] = [];
  for (const [file, text] of files) {
    const target = path.join(opts.chart, file);
    if (!fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== text) {
      fs.writeFileSync(target, text);
      written.push(file);
    }
  }
  emit(!!opts.json, { chart: opts.chart, files: [...files.keys()], written }, () =>
    written.length === 0 ? `${files.size} CRD templates in ${dir}, all current` : `wrote ${written.join(', ')}`,
  );
}
