// The web table's page: draws what the server sends (agents/web/state.py) and sends clicks back.
// The server decides everything; this file only draws views and calls the JSON API.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
// Pip centres of each number in a unit half-tile square, as in domino_env.tools.render.
const PIPS = {
  0: [],
  1: [[0.5, 0.5]],
  2: [[0.25, 0.25], [0.75, 0.75]],
  3: [[0.25, 0.25], [0.5, 0.5], [0.75, 0.75]],
  4: [[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]],
  5: [[0.25, 0.25], [0.75, 0.25], [0.5, 0.5], [0.25, 0.75], [0.75, 0.75]],
  6: [[0.25, 0.22], [0.25, 0.5], [0.25, 0.78], [0.75, 0.22], [0.75, 0.5], [0.75, 0.78]],
};
// The colours of domino_env.tools.render.
const COLOUR = { ivory: "rgb(246, 240, 222)", ink: "rgb(28, 28, 28)", back: "rgb(120, 40, 36)",
  text: "rgb(236, 236, 236)", highlight: "rgb(255, 214, 90)" };
const PACE = Number(new URLSearchParams(location.search).get("pace") ?? 450);  // ms between opponents' moves

let options = null;
let play = null;  // the last play view
let watch = null;  // the last watch view
let busy = false;  // a play request is on its way: clicks wait for its answer
let keyboardPlay = false;  // the last move was made with the keys: keep the focus in the hand

// What the play view waits for, on <body data-play="...">: "loading" (the page opening), "none" (no game),
// "your-move", "waiting", "round-over" or "ended" (the server no longer has the game).
function setPlayState() {
  let state = "waiting";
  if (play && !busy && play.result) state = "round-over";
  else if (play && !busy && play.to_play === play.you) state = "your-move";
  document.body.dataset.play = state;
}

function el(tag, attrs = {}, text = null) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

function showError(message) {
  const box = document.getElementById("error");
  box.textContent = message || "";
  box.hidden = !message;
}

async function api(method, path, body = undefined, raw = false) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = raw ? body : JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (response.status === 410) gameEnded();
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

// The server no longer has this browser's games (restarted without them, or idle too long):
// nothing on the boards can be played any more, and the error box says why.
function gameEnded() {
  play = null;
  watch = null;
  document.getElementById("play-board").hidden = true;
  document.getElementById("watch-board").hidden = true;
  document.body.dataset.play = "ended";
}

// -- tiles ------------------------------------------------------------------------------------
// A tile in half-tile units at (x, y), w x h: two squares side by side (w > h) or stacked.
function drawTile(parent, halves, x, y, w, h, extra = "") {
  const group = el("svg:g", { class: `domino ${extra}`.trim() });
  const last = extra.includes("last");
  group.append(el("svg:rect", { class: "face", x: x + 0.03, y: y + 0.03, width: w - 0.06, height: h - 0.06,
    rx: 0.12, fill: COLOUR.ivory, stroke: last ? COLOUR.highlight : COLOUR.ink, "stroke-width": last ? 0.12 : 0.03 }));
  const across = w > h;
  const line = across ? { x1: x + w / 2, y1: y + 0.12, x2: x + w / 2, y2: y + h - 0.12 }
    : { x1: x + 0.12, y1: y + h / 2, x2: x + w - 0.12, y2: y + h / 2 };
  group.append(el("svg:line", { ...line, stroke: COLOUR.ink, "stroke-width": 0.03 }));
  halves.forEach((number, i) => {
    const ox = across ? x + i * (w / 2) : x;
    const oy = across ? y : y + i * (h / 2);
    const side = across ? w / 2 : h / 2;
    for (const [px, py] of PIPS[number]) {
      group.append(el("svg:circle", { cx: ox + px * side, cy: oy + py * side, r: 0.085 * side, fill: COLOUR.ink }));
    }
  });
  parent.append(group);
  return group;
}

// -- the table: a snake of tiles --------------------------------------------------------------------
// Laid out as players lay a real table, in half-tile units: the centre tile (the spinner, else the
// opening) in the middle of the first row; the line runs out from it to the right, turns down at the
// table's edge and comes back, and to the left, turning up. Doubles lie across the line (upright in
// a corner, where they turn it). A spinner's short arms run straight up and down from it, and the
// rows beside them stop short of them. Every tile keeps its size, so the table grows taller instead
// of its pips growing smaller.
const GAP = 0.12;

function layoutTable(boxes, ends, width) {
  const arms = { left: [], right: [], up: [], down: [] };
  let opening = null;
  for (const b of boxes) {
    if (b.arm === "opening") opening = b;
    else arms[b.arm][b.index] = b;
  }
  const tiles = [];
  const slots = {};
  if (!opening) return { tiles, slots };
  const main = [...arms.left.slice().reverse(), opening, ...arms.right];  // left to right
  let centre = main.findIndex((b) => b.spinner);
  const spinner = centre >= 0;
  if (!spinner) centre = arms.left.length;
  const hub = main[centre];
  const hubDouble = hub.halves[0] === hub.halves[1];
  tiles.push(hubDouble ? { x: -0.5, y: -1, w: 1, h: 2, halves: hub.halves, last: hub.last }
    : { x: -1, y: -0.5, w: 2, h: 1, halves: hub.halves, last: hub.last });

  // The short arms (a spinner's): a column up and one down, each with room for its next tile.
  const columns = {};
  for (const [name, dir] of [["up", -1], ["down", 1]]) {
    if (!spinner) break;
    let edge = dir * (1 + GAP);
    let half = 0.5;
    for (const b of arms[name]) {
      const double = b.halves[0] === b.halves[1];
      const length = double ? 1 : 2;
      const y = dir < 0 ? edge - length : edge;
      tiles.push(double ? { x: -1, y, w: 2, h: 1, halves: b.halves, last: b.last }
        : { x: -0.5, y, w: 1, h: 2, halves: b.halves, last: b.last });
      if (double) half = 1;
      edge += dir * (length + GAP);
    }
    if (name in ends) slots[name] = { x: -0.5, y: dir < 0 ? edge - 2 : edge, w: 1, h: 2, near: dir < 0 ? 1 : 0 };
    const far = edge + dir * 2;  // room for the next tile, open or not yet
    columns[name] = { half, from: Math.min(dir * 1, far), to: Math.max(dir * 1, far) };
  }

  const bound = width / 2 - 1 - 2 * GAP - 0.3;  // rows stay within ±bound; corners stick out past it
  const beside = (column) => column.half + 1 + 3 * GAP;  // a row stops this far from a column's middle
  const crosses = (cy, column) => column && cy !== 0 && cy - 1 - GAP < column.to && cy + 1 + GAP > column.from;
  const parts = {
    right: { dir: 1, vert: 1, x: tiles[0].x + tiles[0].w + GAP, cy: 0, turned: false,
      limits: (cy) => [crosses(cy, columns.down) ? beside(columns.down) : -bound, bound] },
    left: { dir: -1, vert: -1, x: tiles[0].x - GAP, cy: 0, turned: false,
      limits: (cy) => [-bound, crosses(cy, columns.up) ? -beside(columns.up) : bound] },
  };
  const lay = (part, near, far, double) => {
    const across = double && !part.turned;
    const length = across ? 1 : 2;
    const [low, high] = part.limits(part.cy);
    const start = part.dir > 0 ? part.x : part.x - length;
    if (part.dir > 0 ? start + length <= high + 1e-6 : start >= low - 1e-6) {  // room ahead in this row
      part.x = part.dir > 0 ? start + length + GAP : start - GAP;
      part.turned = false;
      const halves = part.dir > 0 ? [near, far] : [far, near];
      return across ? { x: start, y: part.cy - 1, w: 1, h: 2, halves } : { x: start, y: part.cy - 0.5, w: 2, h: 1, halves };
    }
    // No room left in this row: the tile turns the corner, upright, and the next row runs back.
    const x = part.dir > 0 ? part.x : part.x - 1;
    const box = { x, y: part.vert > 0 ? part.cy - 0.5 : part.cy - 1.5, w: 1, h: 2,
      halves: part.vert > 0 ? [near, far] : [far, near] };
    part.cy += part.vert * (2 + GAP);
    part.dir = -part.dir;
    part.x = part.dir > 0 ? x : x + 1;
    part.turned = true;
    return box;
  };
  for (let i = centre + 1; i < main.length; i++) {
    const b = main[i];
    tiles.push({ ...lay(parts.right, b.halves[0], b.halves[1], b.halves[0] === b.halves[1]), last: b.last });
  }
  for (let i = centre - 1; i >= 0; i--) {
    const b = main[i];
    tiles.push({ ...lay(parts.left, b.halves[1], b.halves[0], b.halves[0] === b.halves[1]), last: b.last });
  }
  for (const name of ["left", "right"]) {
    if (!(name in ends)) continue;
    const box = lay({ ...parts[name] }, "near", "far", false);
    slots[name] = { ...box, near: box.halves.indexOf("near") };
  }
  return { tiles, slots };
}

// Where a table of ``px`` pixels puts its half-tile units: a tile is about 38 px long on a wide
// screen and 30 px on a phone, whatever the number of tiles.
function tableUnits(px) {
  return Math.max(14, Math.floor(px / (px < 500 ? 15 : 19)));
}

// The table, its newest tile ringed in gold and each open end a dashed gold slot showing its number
// (``choice``: the moves of a tile that fits several ends, whose slots are clicked to play it).
function drawTable(svg, view, choice = null) {
  svg.replaceChildren();
  const ends = Object.entries(view.ends).map(([name, number]) => `${name} ${number}`).join(", ");
  svg.setAttribute("aria-label", view.table.length
    ? `the table: ${view.table.length} tile${view.table.length === 1 ? "" : "s"}, open ends ${ends}` : "the table is empty");
  const px = svg.getBoundingClientRect().width || 600;
  if (!view.table.length) {
    svg.setAttribute("viewBox", "0 0 20 6");
    svg.style.height = "";  // the style sheet's height
    svg.append(el("svg:text", { x: 10, y: 3, "text-anchor": "middle", "font-size": 0.6, fill: COLOUR.text },
      "the table is empty"));
    return;
  }
  const width = tableUnits(px);
  const { tiles, slots } = layoutTable(view.table, view.ends, width);
  const shapes = [...tiles, ...Object.values(slots)];
  const top = Math.min(...shapes.map((b) => b.y), -2) - 0.4;
  const bottom = Math.max(...shapes.map((b) => b.y + b.h), 2) + 0.4;
  svg.setAttribute("viewBox", `${-width / 2} ${top} ${width} ${bottom - top}`);
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  svg.style.height = `${Math.ceil((bottom - top) * (px / width))}px`;
  for (const b of tiles) drawTile(svg, b.halves, b.x, b.y, b.w, b.h, b.last ? "last" : "");
  for (const [name, slot] of Object.entries(slots)) {
    const move = choice && choice.find((m) => m.end === name);
    const group = el("svg:g", { class: `end-slot${move ? " choice" : ""}`, "data-end": name, "aria-hidden": "true" });
    group.append(el("svg:rect", { x: slot.x + 0.05, y: slot.y + 0.05, width: slot.w - 0.1, height: slot.h - 0.1, rx: 0.12 }));
    const across = slot.w > slot.h;
    const cx = slot.x + (across ? slot.near + 0.5 : 0.5);
    const cy = slot.y + (across ? 0.5 : slot.near + 0.5);
    group.append(el("svg:text", { x: cx, y: cy + 0.22, "text-anchor": "middle", "font-size": 0.62 },
      String(view.ends[name])));
    if (move) group.addEventListener("click", () => sendMove(move.action));
    svg.append(group);
  }
}

// A hand tile as its own small upright SVG; ``name`` is "a-b", high number first.
function handTile(name, scale = 44) {
  const [high, low] = name.split("-").map(Number);
  const svg = el("svg:svg", { class: "tile", width: scale, height: 2 * scale, viewBox: "0 0 1 2", "data-tile": name });
  drawTile(svg, [high, low], 0, 0, 1, 2);
  return svg;
}

function backTile(scale = 13) {
  const svg = el("svg:svg", { class: "back", width: scale, height: 2 * scale, viewBox: "0 0 1 2" });
  svg.append(el("svg:rect", { x: 0.05, y: 0.05, width: 0.9, height: 1.9, rx: 0.12, fill: COLOUR.back }));
  return svg;
}

// -- the parts both views share -------------------------------------------------------------------
// Each seat with its hand face up where the view holds it, else face down.
// Seats sit around the table (``place``: bottom, left, top, right); on the player's side a seat
// is marked as a partner.
function drawSeats(container, view, mine = null) {
  container.querySelectorAll(".seat").forEach((box) => box.remove());
  container.dataset.players = view.players;
  for (const seat of view.seats) {
    if (seat.seat === mine) continue;  // the player's own hand is the row below the table
    const partner = mine !== null && seat.side === view.seats[mine].side;
    const classes = ["seat", view.to_play === seat.seat ? "to-play" : "", partner ? "partner" : ""];
    const box = el("div", { class: classes.join(" ").trim(), "data-seat": seat.seat, "data-place": seat.place });
    box.append(el("div", { class: "name" }, mine === null ? `seat ${seat.seat}: ${seat.name}` : seat.label));
    const notes = [`${seat.tiles} tile${seat.tiles === 1 ? "" : "s"}`];
    if (seat.draws) notes.push(`drew ${seat.draws}`);
    if (seat.passes) notes.push(`passed ${seat.passes}`);
    if (seat.missing.length) notes.push(`lacks ${seat.missing.join(", ")}`);
    box.append(el("div", { class: "info" }, notes.join(" · ")));
    const tiles = el("div", { class: "tiles" });
    if (seat.hand) seat.hand.forEach((name) => tiles.append(handTile(name, 18)));
    else for (let i = 0; i < seat.tiles; i++) tiles.append(backTile());
    box.append(tiles);
    const said = mine !== null && callouts.get(seat.seat);
    if (said && said.until > Date.now()) box.append(el("div", { class: "callout", role: "status" }, said.text));
    container.append(box);
  }
}

// Draws and passes happen by themselves: each shows for a moment as a bubble on the seat that made it
// (your own on your hand), as well as in the log. ``callouts``: seat -> {text, until}.
const callouts = new Map();
const CALLOUT_MS = 2500;
let announced = 0;  // log lines of the shown round already announced
let calloutTimer = null;

function announce(view) {
  const fresh = view.log.length < announced ? [] : view.log.slice(announced);
  announced = view.log.length;
  const until = Date.now() + CALLOUT_MS;
  for (const line of fresh) {
    if (line.kind === "pass") callouts.set(line.seat, { text: line.seat === view.you ? "You pass" : "passes", until });
    else if (line.kind === "draw") callouts.set(line.seat, { text: line.text.replace(/^.*?(draws?) /, "$1 "), until });
    else callouts.delete(line.seat);
  }
  if (fresh.some((line) => line.kind !== "place")) {
    clearTimeout(calloutTimer);
    calloutTimer = setTimeout(() => {
      document.querySelectorAll(".callout").forEach((node) => node.remove());
      callouts.clear();
    }, CALLOUT_MS);
  }
}

function describeStatus(view, scoresId, turnId, you = null) {
  const scores = view.sides.map((side, i) => `${side}: ${view.scores[i]}`).join(" · ");
  document.getElementById(scoresId).textContent = scores;
  let turn = "";
  if (view.result) turn = "round over";
  else if (view.to_play === you) turn = "your move";
  else if (view.to_play !== null) turn = you === null ? `seat ${view.to_play} to move` : `${view.seats[view.to_play].label} to move`;
  document.getElementById(turnId).textContent = turn;
}

function describeEnds(id, view) {
  const ends = Object.entries(view.ends).map(([name, number]) => `${name} ${number}`).join(", ") || "none yet";
  let text = `Open ends: ${ends}`;
  if (view.fives !== null) text += ` (count ${view.fives})`;
  if (view.boneyard !== null) text += ` · boneyard ${view.boneyard}`;
  document.getElementById(id).textContent = text;
}

// Log lines {move, text}: placements carry the move number the counter shows; draws and passes none.
function drawLog(id, lines) {
  const log = document.getElementById(id);
  log.replaceChildren(...lines.map((line) => {
    const item = el("li", { class: line.move ? "move" : "note" });
    item.append(el("span", { class: "number" }, line.move ? `${line.move}.` : ""), document.createTextNode(line.text));
    return item;
  }));
  log.scrollTop = log.scrollHeight;
}

// -- play -----------------------------------------------------------------------------------------
function fillPlayForm() {
  const preset = document.getElementById("preset");
  preset.replaceChildren(...Object.keys(options.presets).map((name) => el("option", { value: name }, name)));
  preset.value = "block";
  preset.addEventListener("change", fillPlayers);
  document.getElementById("players").addEventListener("change", fillSeats);
  document.getElementById("seat").addEventListener("change", fillOpponents);
  fillPlayers();
}

function fillPlayers() {
  const counts = options.presets[document.getElementById("preset").value];
  const players = document.getElementById("players");
  players.replaceChildren(...counts.map((n) => el("option", { value: n }, String(n))));
  fillSeats();
}

function fillSeats() {
  const count = Number(document.getElementById("players").value);
  const seat = document.getElementById("seat");
  seat.replaceChildren(...[...Array(count).keys()].map((s) => el("option", { value: s }, `seat ${s}`)));
  fillOpponents();
}

// The trained agents that play these rules with this many players (each plays only what it was trained
// for; one whose rules are not known is offered everywhere and checked when the game starts).
function agentsFor(preset, players) {
  return (options.agents || []).filter((a) => a.preset === null ? !a.error : a.preset === preset && a.players === players);
}

// Why the other trained agents are not offered: a short line, and the list under it.
function explainAgents(preset, players, offered) {
  const note = document.getElementById("agents-note");
  const others = (options.agents || []).filter((a) => !offered.includes(a));
  note.hidden = !others.length;
  if (!others.length) return;
  const rules = `${preset} with ${players} players`;
  document.getElementById("agents-summary").textContent = offered.length
    ? `${others.length} other trained agent${others.length === 1 ? "" : "s"} not offered: each plays only the rules and player count it was trained for`
    : `No trained agent plays ${rules}: each plays only the rules and player count it was trained for`;
  document.getElementById("agents-missing").replaceChildren(...others.map((a) => el("li", {},
    a.error ? `${a.name}: cannot be read (${a.error})` : `${a.name}: ${a.preset} with ${a.players} players`)));
}

function fillOpponents() {
  const preset = document.getElementById("preset").value;
  const count = Number(document.getElementById("players").value);
  const mine = Number(document.getElementById("seat").value);
  const box = document.getElementById("opponents");
  const agents = agentsFor(preset, count);
  box.replaceChildren();
  for (let s = 0; s < count; s++) {
    if (s === mine) continue;
    const select = el("select", { class: "opponent", "data-seat": s });
    const bots = el("optgroup", { label: "bots" });
    options.bots.forEach((name) => bots.append(el("option", { value: name }, name)));
    select.append(bots);
    if (agents.length) {
      const nets = el("optgroup", { label: `trained for ${preset} ${count}p` });
      agents.forEach((a) => nets.append(el("option", { value: a.name }, a.name)));
      select.append(nets);
    }
    select.value = "strong";
    const label = el("label", {}, `Seat ${s}`);
    label.append(select);
    box.append(label);
  }
  explainAgents(preset, count, agents);
}

// "New game" while a game is in progress asks first (Keep playing has the focus, Escape keeps it too).
function newGame(event) {
  event.preventDefault();
  if (!play || play.match.over || document.body.dataset.play === "ended") return dealNewGame();
  const dialog = document.getElementById("confirm-new");
  const round = play.match.rounds + (play.result ? 0 : 1);
  const scores = play.sides.map((side, i) => `${side} ${play.scores[i]}`).join(", ");
  document.getElementById("confirm-new-text").textContent =
    `A game is in progress (round ${round}; ${scores}; first to ${play.match.target}). Abandon it and deal a new one?`;
  dialog.showModal();
  document.getElementById("confirm-keep").focus();
}

function closeConfirm(deal) {
  document.getElementById("confirm-new").close();
  if (deal) dealNewGame();
  else document.getElementById("deal").focus();
}

async function dealNewGame() {
  const seedText = document.getElementById("seed").value;
  const request = {
    preset: document.getElementById("preset").value,
    players: Number(document.getElementById("players").value),
    seat: Number(document.getElementById("seat").value),
    opponents: [...document.querySelectorAll("select.opponent")].map((s) => s.value),
    seed: seedText === "" ? null : Number(seedText),
  };
  await playRequest("/api/play", request);
}

function drawPlay(fresh = false) {
  if (fresh) announced = play.log.length;  // a reloaded or new game: nothing to announce
  else announce(play);
  document.getElementById("play-board").hidden = false;
  describeStatus(play, "play-scores", "play-turn", play.you);
  const round = play.match.rounds + (play.result ? 0 : 1);
  document.getElementById("play-match").textContent = `first to ${play.match.target} · round ${round}`;
  drawSeats(document.getElementById("play-seats"), play, play.you);
  drawTable(document.getElementById("play-table"), play);
  describeEnds("play-ends", play);
  const legalTiles = new Set(play.legal.map((m) => m.tile));
  const hand = document.getElementById("play-hand");
  hand.replaceChildren();
  for (const name of play.seats[play.you].hand) {
    const tile = handTile(name);
    if (legalTiles.has(name)) {
      tile.classList.add("legal");
      tile.setAttribute("tabindex", "0");
      tile.setAttribute("role", "button");
      tile.setAttribute("aria-label", `play ${name}`);
      tile.addEventListener("click", (event) => {
        keyboardPlay = event.detail === 0;  // a click made by a key press has no pointer
        chooseTile(name);
      });
      tile.addEventListener("keydown", (event) => tileKey(event, name));
    } else {
      tile.setAttribute("aria-label", `${name}, cannot be played now`);
    }
    hand.append(tile);
  }
  const mine = callouts.get(play.you);
  document.querySelector(".hand-row .callout")?.remove();
  if (mine && mine.until > Date.now()) hand.before(el("div", { class: "callout", role: "status" }, mine.text));
  document.getElementById("end-choice").hidden = true;
  document.getElementById("hint").textContent = "";
  if (play.legal.length && document.getElementById("hint-on").checked) showHint();
  const result = document.getElementById("play-result");
  result.hidden = !play.result;
  if (play.result) {
    let text = play.result.text;
    if (play.match.over) text += ` Match over: ${play.match.winner} wins (target ${play.match.target}).`;
    document.getElementById("play-result-text").textContent = text;
    document.getElementById("next-round").hidden = play.match.over;
  }
  drawLog("play-log", play.log);
}

// Keyboard play: the arrow keys move between the playable tiles, Enter or Space plays one.
function tileKey(event, name) {
  const tiles = [...document.querySelectorAll("#play-hand svg.legal")];
  const at = tiles.indexOf(event.currentTarget);
  if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
    event.preventDefault();
    const step = event.key === "ArrowRight" ? 1 : -1;
    tiles[(at + step + tiles.length) % tiles.length].focus();
  } else if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    keyboardPlay = true;
    chooseTile(name);
  }
}

// The trained agent's choice in the player's place (only asked for when the box is ticked).
async function showHint() {
  const line = document.getElementById("hint");
  const asked = play;
  try {
    const hint = await api("GET", "/api/play/hint");
    if (play !== asked) return;
    line.textContent = `${hint.agent} would play ${hint.tile}${hint.end ? ` on the ${hint.end}` : ""} (${Math.round(100 * hint.p)}%)`;
    document.querySelectorAll("#play-hand svg.tile").forEach((t) => t.classList.toggle("hinted", t.dataset.tile === hint.tile));
  } catch (error) {
    line.textContent = error.message;
  }
}

async function saveGame() {
  try {
    showError(null);
    const info = await api("POST", "/api/play/save");
    document.querySelector(".tab[data-tab=watch]").click();
    await loaded(info);
  } catch (error) {
    showError(error.message);
  }
}

// A tile that fits ends leading to different tables asks which: buttons (the arrow keys move between
// them, Enter plays, Escape goes back to the hand) and the gold slots on the table, clicked or tapped.
// One whose ends lead to the same table is played at once (the server offers it once).
function chooseTile(name) {
  if (busy) return;
  const moves = play.legal.filter((m) => m.tile === name);
  if (moves.length === 1) return sendMove(moves[0].action);
  document.querySelectorAll("#play-hand svg.tile").forEach((t) => t.classList.toggle("chosen", t.dataset.tile === name));
  drawTable(document.getElementById("play-table"), play, moves);
  const choice = document.getElementById("end-choice");
  choice.dataset.tile = name;
  choice.replaceChildren(el("span", {}, `Play ${name} on:`));
  for (const move of moves) {
    const button = el("button", { type: "button", "data-end": move.end }, `${move.end} (${play.ends[move.end]})`);
    button.addEventListener("click", () => sendMove(move.action));
    choice.append(button);
  }
  choice.hidden = false;
  choice.querySelector("button").focus();
}

function endChoiceKey(event) {
  const choice = document.getElementById("end-choice");
  const buttons = [...choice.querySelectorAll("button")];
  const at = buttons.indexOf(document.activeElement);
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
  if (step && at >= 0) {
    event.preventDefault();
    buttons[(at + step + buttons.length) % buttons.length].focus();
  } else if (event.key === "Escape") {
    event.preventDefault();
    const name = choice.dataset.tile;
    choice.hidden = true;
    document.querySelectorAll("#play-hand svg.tile").forEach((t) => t.classList.remove("chosen"));
    drawTable(document.getElementById("play-table"), play);
    document.querySelector(`#play-hand svg.legal[data-tile="${name}"]`)?.focus();
  }
}

// Every play request goes through here: one at a time, then the opponents' moves.
async function playRequest(path, body = undefined) {
  if (busy) return;
  busy = true;
  setPlayState();
  try {
    showError(null);
    if (path) {
      const fresh = path === "/api/play" || path === "/api/play/next";
      play = await api("POST", path, body);
      drawPlay(fresh);
    }
    await opponentsMove();
  } catch (error) {
    showError(error.message);
  } finally {
    busy = false;
    if (play) setPlayState();
    if (play && keyboardPlay) {
      const next = play.result ? document.getElementById("next-round") : document.querySelector("#play-hand svg.legal");
      next?.focus();
    }
  }
}

function sendMove(action) {
  return playRequest("/api/play/move", { action });
}

// Opponents' moves one request at a time, so each shows before the next.
async function opponentsMove() {
  while (play && !play.result && play.to_play !== play.you) {
    await new Promise((done) => setTimeout(done, PACE));
    play = await api("POST", "/api/play/advance");
    drawPlay();
  }
}

// The page opens on "loading your game…": the form appears with the game in progress and the settings
// it was started with (or the defaults when there is none), never a default form first.
async function resumePlay(current) {
  if (current.ended) {
    gameEnded();
    showError(current.ended);
  }
  if (!current.game) return;
  const settings = current.game.settings;
  document.getElementById("preset").value = settings.preset;
  fillPlayers();
  document.getElementById("players").value = String(settings.players);
  fillSeats();
  document.getElementById("seat").value = String(settings.seat);
  fillOpponents();
  document.querySelectorAll("select.opponent").forEach((select, i) => { select.value = settings.opponents[i] ?? "random"; });
  document.getElementById("seed").value = settings.seed ?? "";
  play = current.game;
  drawPlay(true);
}

function nextRound() {
  return playRequest("/api/play/next");
}

// -- watch ----------------------------------------------------------------------------------------
async function loaded(info) {
  const viewer = document.getElementById("viewer");
  const seats = info.seats.map((name, s) => el("option", { value: s }, `seat ${s} (${name})`));
  if (info.seat === null) viewer.replaceChildren(el("option", { value: -1 }, "every hand (spectator)"), ...seats);
  else viewer.replaceChildren(seats[info.seat]);  // a round you played: your own view only
  const analyst = document.getElementById("analyst");
  analyst.replaceChildren(el("option", { value: "auto" }, "trained seats"), el("option", { value: "none" }, "nobody"),
    ...agentsFor(info.preset, info.players).map((a) => el("option", { value: a.name }, a.name)));
  watchTarget = 0;
  await showStep(0);
}

async function uploadRecord() {
  const file = document.getElementById("record-file").files[0];
  if (!file) return;
  try {
    showError(null);
    await loaded(await api("POST", "/api/watch/upload", await file.text(), true));
  } catch (error) {
    document.getElementById("watch-board").hidden = true;
    showError(error.message);
  }
}

async function loadSaved() {
  const name = document.getElementById("saved-games").value;
  if (!name) return;
  try {
    showError(null);
    await loaded(await api("POST", "/api/watch/load", { name }));
  } catch (error) {
    showError(error.message);
  }
}

async function showStep(step) {
  const viewer = document.getElementById("viewer").value;
  const analyst = document.getElementById("analyst").value;
  try {
    const query = new URLSearchParams({ step, viewer, analyst });
    watch = await api("GET", `/api/watch?${query}`);
    showError(null);
  } catch (error) {
    showError(error.message);
    if (watch) watchTarget = watch.step;
    return;
  }
  document.getElementById("watch-board").hidden = false;
  document.getElementById("step-label").textContent = `move ${watch.step} / ${watch.steps}`;
  document.body.dataset.watchStep = watch.step;  // what a test waits for
  document.body.dataset.watchViewer = watch.viewer ?? -1;
  describeStatus(watch, "watch-scores", "watch-turn");
  drawSeats(document.getElementById("watch-seats"), watch);
  drawTable(document.getElementById("watch-table"), watch);
  describeEnds("watch-ends", watch);
  const table = document.getElementById("probabilities");
  table.hidden = !watch.probabilities;
  if (watch.probabilities) {
    document.getElementById("probabilities-caption").textContent = `seat ${watch.to_play}: the policy's probabilities`;
    table.tBodies[0].replaceChildren(...watch.probabilities.map((m) => {
      const row = el("tr", { class: m.played ? "played" : "" });
      row.append(el("td", {}, m.move), el("td", {}, `${(100 * m.p).toFixed(1)}%`));
      const bar = el("td");
      const length = el("span", { class: "bar" });
      length.style.width = `${Math.max(1, 150 * m.p)}px`;
      bar.append(length);
      row.append(bar, el("td", {}, m.played ? "played" : ""));
      return row;
    }));
  }
  const note = document.getElementById("probabilities-note");
  note.hidden = Boolean(watch.probabilities) || !watch.probabilities_note;
  note.textContent = watch.probabilities ? "" : watch.probabilities_note || "";
  const result = document.getElementById("watch-result");
  result.hidden = !watch.result;
  if (watch.result) document.getElementById("watch-result-text").textContent = watch.result.text;
  const log = watch.log.slice();
  if (watch.next_move) log.push({ move: null, text: `next: ${watch.next_move}` });
  drawLog("watch-log", log);
}

// Steps are counted from the last one asked for, not the last one shown, so rapid clicks add up;
// one request at a time, always for the latest step asked.
let watchTarget = 0;
let stepping = false;
async function stepBy(delta) {
  if (!watch) return;
  watchTarget = Math.min(Math.max(watchTarget + delta, 0), watch.steps);
  if (stepping) return;
  stepping = true;
  try {
    while (watch && watch.step !== watchTarget) await showStep(watchTarget);
  } finally {
    stepping = false;
  }
}

// -- start ------------------------------------------------------------------------------------------
async function start() {
  document.querySelectorAll(".tab").forEach((tab) => tab.addEventListener("click", () => {
    document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t === tab));
    document.getElementById("play").hidden = tab.dataset.tab !== "play";
    document.getElementById("watch").hidden = tab.dataset.tab !== "watch";
  }));
  document.getElementById("new-game").addEventListener("submit", newGame);
  document.getElementById("confirm-keep").addEventListener("click", () => closeConfirm(false));
  document.getElementById("confirm-deal").addEventListener("click", () => closeConfirm(true));
  document.getElementById("confirm-new").addEventListener("cancel", (event) => {  // Escape
    event.preventDefault();
    closeConfirm(false);
  });
  document.getElementById("end-choice").addEventListener("keydown", endChoiceKey);
  let resized = null;
  window.addEventListener("resize", () => {
    clearTimeout(resized);
    resized = setTimeout(() => {
      if (play && !document.getElementById("play-board").hidden) drawTable(document.getElementById("play-table"), play);
      if (watch && !document.getElementById("watch-board").hidden) drawTable(document.getElementById("watch-table"), watch);
    }, 100);
  });
  document.getElementById("next-round").addEventListener("click", nextRound);
  document.getElementById("save-game").addEventListener("click", saveGame);
  const hintOn = document.getElementById("hint-on");
  hintOn.checked = localStorage.getItem("domino-hint") === "on";
  hintOn.addEventListener("change", () => {
    localStorage.setItem("domino-hint", hintOn.checked ? "on" : "off");
    document.getElementById("hint").textContent = "";
    if (hintOn.checked && play && play.legal.length) showHint();
  });
  document.getElementById("record-file").addEventListener("change", uploadRecord);
  document.getElementById("load-saved").addEventListener("click", loadSaved);
  document.getElementById("step-first").addEventListener("click", () => stepBy(-Infinity));
  document.getElementById("step-back").addEventListener("click", () => stepBy(-1));
  document.getElementById("step-forward").addEventListener("click", () => stepBy(1));
  document.getElementById("step-last").addEventListener("click", () => stepBy(Infinity));
  document.getElementById("viewer").addEventListener("change", () => watch && showStep(watch.step));
  document.getElementById("analyst").addEventListener("change", () => watch && showStep(watch.step));
  document.addEventListener("keydown", (event) => {
    if (document.getElementById("watch").hidden || event.target.tagName === "INPUT") return;
    if (event.key === "ArrowLeft") stepBy(-1);
    if (event.key === "ArrowRight") stepBy(1);
  });
  // The options and the game in progress are asked for at once; the form shows when both are in.
  const current = api("GET", "/api/play/current").catch((error) => ({ game: null, ended: null, failed: error }));
  try {
    options = await api("GET", "/api/options");
  } catch (error) {
    document.getElementById("loading").hidden = true;
    showError(error.message);
    return;
  }
  fillPlayForm();
  const resumed = await current;
  if (resumed.failed) showError(resumed.failed.message);
  await resumePlay(resumed);
  document.getElementById("loading").hidden = true;
  document.getElementById("new-game").hidden = false;
  if (!play && document.body.dataset.play === "loading") document.body.dataset.play = "none";
  const saved = document.getElementById("saved-games");
  saved.replaceChildren(...options.games.map((name) => el("option", { value: name }, name)));
  saved.disabled = !options.games.length;
  document.getElementById("load-saved").disabled = !options.games.length;
  if (play) await playRequest(null);
}

start();
