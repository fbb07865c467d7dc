/**
 * The document a blog post's `content` holds: a list of blocks, each a plain-text piece of one type.
 * Written once here; the BlogPost manifest validates with it and the API documents its answers with
 * it, so what is stored is exactly what clients are promised. Text is plain (no markup): a client
 * renders each block its own way.
 */
import { type Static, Type } from '@sinclair/typebox';

const Text = (maxLength: number, description?: string) => Type.String({ minLength: 1, maxLength, ...(description ? { description } : {}) });
const ImageUrl = Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'an http(s) address' });

export const BLOG_BLOCK_TYPES = ['paragraph', 'heading', 'image', 'list', 'quote', 'code'] as const;

const BLOCK_VARIANTS = [
  Type.Object({ type: Type.Literal('paragraph'), text: Text(20_000, 'the text of a paragraph, heading or quote') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('heading'),
      level: Type.Integer({ minimum: 2, maximum: 4, description: '2 to 4: the title is the level-1 heading' }),
      text: Text(300, 'the text of a paragraph, heading or quote'),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('image'),
      url: ImageUrl,
      alt: Type.String({ maxLength: 500, description: 'what the image shows, for readers who cannot see it' }),
      caption: Type.Optional(Text(500, "an image's caption")),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('list'),
      ordered: Type.Boolean({ description: 'numbered (true) or bulleted' }),
      items: Type.Array(Text(2_000), { minItems: 1, maxItems: 200, description: "a list's items, in order" }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('quote'), text: Text(5_000, 'the text of a paragraph, heading or quote'), attribution: Type.Optional(Text(200, 'who said it')) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('code'),
      language: Type.Optional(Type.String({ minLength: 1, maxLength: 40, pattern: '^[A-Za-z0-9_+#.-]+$', description: 'the language, for highlighting' })),
      code: Text(50_000, 'the code, as written'),
    },
    { additionalProperties: false },
  ),
] as const;
const BlockUnion = Type.Union([...BLOCK_VARIANTS]);
export type BlogBlock = Static<typeof BlockUnion>;

/**
 * One block: its `type` first, then the fields of that type. Written as if/then rather than a plain
 * union so that a refusal names what is wrong (`type must be one of ...`, `level must be >= 2`)
 * instead of the first union member's complaint.
 */
const FIELDS_OF_ANY_BLOCK = [...new Set(BLOCK_VARIANTS.flatMap((variant) => Object.keys(variant.properties)))];
export const BlogBlock = Type.Unsafe<BlogBlock>({
  type: 'object',
  description: 'a block: `type`, then the fields of that type (docs/blog.md)',
  required: ['type'],
  // No field outside every type's fields; each type's own schema (below) then holds the rest.
  properties: {
    ...Object.fromEntries(FIELDS_OF_ANY_BLOCK.map((field) => [field, true])),
    type: { type: 'string', enum: [...BLOG_BLOCK_TYPES], description: 'the kind of block, which says its other fields' },
  },
  additionalProperties: false,
  allOf: BLOCK_VARIANTS.map((variant) => ({
    if: { properties: { type: { const: variant.properties.type.const } } },
    then: variant,
  })),
});

/**
 * A block as the API answers it: one of the types, each named (`BlogParagraph`...) so that client
 * generators make one type per kind of block. What is answered was validated by BlogBlock when stored.
 */
const NAMES = { paragraph: 'BlogParagraph', heading: 'BlogHeading', image: 'BlogImage', list: 'BlogList', quote: 'BlogQuote', code: 'BlogCode' } as const;
export const BlogBlockAnswer = Type.Union(
  BLOCK_VARIANTS.map((variant) => Type.Object(variant.properties, { $id: NAMES[variant.properties.type.const], additionalProperties: false })),
  { description: 'a block: `type`, then the fields of that type (docs/blog.md)' },
) as unknown as typeof BlockUnion;

/** A post's content: `{ blocks: [...] }`, at most 500 blocks. */
export const BlogContent = Type.Object(
  { blocks: Type.Array(BlogBlock, { maxItems: 500, description: 'the post, top to bottom' }) },
  { additionalProperties: false, description: 'the post document: a list of plain-text blocks (docs/blog.md)' },
);
export type BlogContent = Static<typeof BlogContent>;

/** A post's content as the API answers it (its blocks as BlogBlockAnswer). */
export const BlogContentAnswer = Type.Object(
  { blocks: Type.Array(BlogBlockAnswer, { maxItems: 500, description: 'the post, top to bottom' }) },
  { $id: 'BlogContent', additionalProperties: false, description: 'the post document: a list of plain-text blocks (docs/blog.md)' },
);

/** Reading speed for `readingMinutes` when a post does not give it: a common figure for screen reading. */
export const WORDS_PER_MINUTE = 200;

/** The words a reader reads: every block's text (image captions included, code too), split on whitespace. */
export function wordCount(content: BlogContent): number {
  let words = 0;
  const count = (text: string | undefined) => {
    if (text) words += text.split(/\s+/).filter(Boolean).length;
  };
  for (const block of content.blocks) {
    switch (block.type) {
      case 'paragraph':
      case 'heading':
        count(block.text);
        break;
      case 'quote':
        count(block.text);
        count(block.attribution);
        break;
      case 'image':
        count(block.caption);
        break;
      case 'list':
        block.items.forEach(count);
        break;
      case 'code':
        count(block.code);
        break;
    }
  }
  return words;
}

/** Minutes to read the content at WORDS_PER_MINUTE, rounded up, at least 1. */
export function readingMinutesOf(content: BlogContent): number {
  return Math.max(1, Math.ceil(wordCount(content) / WORDS_PER_MINUTE));
}
