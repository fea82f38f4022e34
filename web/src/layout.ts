// A deterministic, linear-time layout for the Brain view: each community is a disc whose
// area grows with its file count, discs are packed on a sunflower spiral (largest first),
// and a community's files fill its disc on a smaller sunflower (largest files nearest the
// centre, where the community's own label sits). No force simulation: Django's 2.9k files
// are placed in a few milliseconds, the same way every time.

export interface Point { x: number; y: number }
export interface Group { id: number; center: Point; radius: number; members: number[] }

const GOLDEN = Math.PI * (3 - Math.sqrt(5));
const SPACING = 1;

export function layout(count: number, groupOf: (i: number) => number,
                       weightOf: (i: number) => number): { points: Point[]; groups: Group[] } {
  const byGroup = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const g = groupOf(i);
    let list = byGroup.get(g);
    if (!list) byGroup.set(g, (list = []));
    list.push(i);
  }
  const groups: Group[] = [...byGroup.entries()]
    .map(([id, members]) => ({
      id, members: members.sort((a, b) => weightOf(b) - weightOf(a) || a - b),
      radius: SPACING * Math.sqrt(members.length + 1) * 1.15, center: { x: 0, y: 0 },
    }))
    .sort((a, b) => b.members.length - a.members.length || a.id - b.id);
  const placed: Group[] = [];
  groups.forEach((g, k) => {
    const angle = k * GOLDEN;
    let d = k === 0 ? 0 : placed[0].radius + g.radius;
    for (;;) {
      const c = { x: d * Math.cos(angle), y: d * Math.sin(angle) };
      if (placed.every((p) => Math.hypot(p.center.x - c.x, p.center.y - c.y) >= p.radius + g.radius + SPACING)) {
        g.center = c;
        break;
      }
      d += Math.max(0.25, g.radius / 4);
    }
    placed.push(g);
  });
  const points: Point[] = new Array(count);
  for (const g of groups) {
    g.members.forEach((i, j) => {
      const r = SPACING * Math.sqrt(j + 1);
      points[i] = { x: g.center.x + r * Math.cos((j + 1) * GOLDEN), y: g.center.y + r * Math.sin((j + 1) * GOLDEN) };
    });
  }
  return { points, groups };
}

// Child nodes (a file's symbols) on a small sunflower around their parent.
export function around(center: Point, count: number, scale: number): Point[] {
  const out: Point[] = [];
  for (let j = 0; j < count; j++) {
    const r = scale * Math.sqrt(j + 1);
    out.push({ x: center.x + r * Math.cos((j + 1) * GOLDEN), y: center.y + r * Math.sin((j + 1) * GOLDEN) });
  }
  return out;
}

const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
                 "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8", "#8cd17d"];

export function communityColor(rank: number): string {
  return rank < 0 ? "#8a8f98" : PALETTE[rank % PALETTE.length];
}

// A colour between `a` and `b` (hex #rrggbb), t in 0..1.
export function mix(a: string, b: string, t: number): string {
  const pa = parseInt(a.slice(1), 16), pb = parseInt(b.slice(1), 16);
  const ch = (p: number, s: number) => (p >> s) & 255;
  const c = (s: number) => Math.round(ch(pa, s) + (ch(pb, s) - ch(pa, s)) * t);
  return "#" + ((1 << 24) | (c(16) << 16) | (c(8) << 8) | c(0)).toString(16).slice(1);
}
