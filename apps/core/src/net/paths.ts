/**
 * Trailing slashes make no difference (spec §4): `/v1/flags/` is `/v1/flags`. The one rule the API's
 * router and the socket's upgrade path both follow; `/` stays `/`.
 */
export function withoutTrailingSlashes(path: string): string {
  if (path.length <= 1 || path.charCodeAt(path.length - 1) !== 47 /* / */) return path;
  let end = path.length - 1;
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--;
  return end === 0 ? '/' : path.slice(0, end);
}
