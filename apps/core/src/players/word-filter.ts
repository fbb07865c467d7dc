/**
 * Stars out disallowed words in display names: whole words, case-insensitive, each letter replaced by
 * `*`. Whole words only, so a name that merely contains one (Scunthorpe) is left alone.
 */
const BUILT_IN = ['fuck', 'fucker', 'fucking', 'shit', 'cunt', 'bitch', 'asshole', 'bastard', 'dick', 'nigger', 'faggot', 'whore', 'slut'];

function escape(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const compiled = new Map<string, RegExp>();

function patternFor(extra: string[]): RegExp {
  const cacheKey = extra.join('\u0000');
  let re = compiled.get(cacheKey);
  if (!re) {
    const words = [...new Set([...BUILT_IN, ...extra.map((w) => w.trim().toLowerCase()).filter(Boolean)])];
    words.sort((a, b) => b.length - a.length);
    re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(escape).join('|')})(?![\\p{L}\\p{N}])`, 'giu');
    if (compiled.size > 1000) compiled.clear();
    compiled.set(cacheKey, re);
  }
  return re;
}

export function filterWords(text: string, extraWords: string[] = []): string {
  return text.replace(patternFor(extraWords), (word) => '*'.repeat([...word].length));
}
