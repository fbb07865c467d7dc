import type { Knex } from 'knex';

/**
 * The read-only blog (spec §2 Blog, §4 Blog): categories and posts of an environment, written by the
 * BlogCategory and BlogPost manifests. Each row is owned by the document that made it (`owner` =
 * `namespace/name`), so a deleted document can take its row away and a slug cannot belong to two
 * documents. A post is visible once `published_at <= now()`: scheduled posts need no job to appear.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE blog_categories (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      slug text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      name text NOT NULL,
      description text,
      -- the console order: lower first, then by slug
      sort_order integer NOT NULL DEFAULT 0,
      PRIMARY KEY (environment_id, slug)
    );

    CREATE TABLE blog_posts (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      slug text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      -- a category in use cannot go (checked at the end of the statement, so an environment's cascade passes)
      category_slug text COLLATE "C" NOT NULL,
      title text NOT NULL,
      subtitle text,
      excerpt text,
      content jsonb NOT NULL,
      seo_title text,
      seo_description text,
      author_name text,
      -- [{ slug, name }] in the document's order
      tags jsonb NOT NULL DEFAULT '[]',
      cover text,
      featured boolean NOT NULL DEFAULT false,
      reading_minutes integer NOT NULL CHECK (reading_minutes > 0),
      status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'published')),
      -- when readers see it: a scheduled post's publishAt, a published post's publishedAt; null for drafts
      published_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (environment_id, slug),
      FOREIGN KEY (environment_id, category_slug) REFERENCES blog_categories (environment_id, slug),
      CHECK ((status = 'draft') = (published_at IS NULL))
    );
    CREATE INDEX blog_posts_visible ON blog_posts (environment_id, published_at DESC, slug) WHERE published_at IS NOT NULL;
    CREATE INDEX blog_posts_category ON blog_posts (environment_id, category_slug);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE blog_posts, blog_categories');
}
