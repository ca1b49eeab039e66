import { type Handlers, notFound, type PageProps } from "shell";

interface Post {
  title: string;
  body: string;
}

const POSTS: Record<string, Post> = {
  "hello-world": { title: "Hello, world", body: "The first post: rendered on the server." },
  "islands": { title: "Islands", body: "Only the interactive parts ship JavaScript." },
};

export const handler: Handlers<Post> = {
  GET(_req, ctx) {
    // Own keys only: `POSTS["constructor"]` is Object, which rendered as an empty post.
    const slug = ctx.params.slug;
    if (!Object.hasOwn(POSTS, slug)) throw notFound();
    return ctx.render(POSTS[slug]);
  },
};

export default function BlogPost({ data }: PageProps<Post>) {
  return (
    <article>
      <title>{data.title}</title>
      <h1>{data.title}</h1>
      <p>{data.body}</p>
    </article>
  );
}
