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

// What the play view waits for, on <body data-play="...">: "your-move", "waiting" or "round-over".
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
  group.append(el("svg:rect", { class: "face", x: x + 0.03, y: y + 0.03, width: w - 0.06, height: h - 0.06,
    rx: 0.12, fill: COLOUR.ivory, stroke: extra.includes("last") ? COLOUR.highlight : COLOUR.ink,
    "stroke-width": extra.includes("last") ? 0.1 : 0.03 }));
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
}

function drawTable(svg, boxes) {
  svg.replaceChildren();
  if (!boxes.length) {
    svg.setAttribute("viewBox", "0 0 20 6");
    svg.append(el("svg:text", { x: 10, y: 3, "text-anchor": "middle", "font-size": 0.6, fill: COLOUR.text },
      "the table is empty"));
    return;
  }
  const left = Math.min(...boxes.map((b) => b.x)) - 0.5;
  const top = Math.min(...boxes.map((b) => b.y), -2) - 0.5;
  const right = Math.max(...boxes.map((b) => b.x + b.w)) + 0.5;
  const bottom = Math.max(...boxes.map((b) => b.y + b.h), 2) + 0.5;
  const width = Math.max(right - left, 16);  // a short line of tiles sits in the middle of the felt
  svg.setAttribute("viewBox", `${(left + right - width) / 2} ${top} ${width} ${bottom - top}`);
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  for (const b of boxes) drawTile(svg, b.halves, b.x, b.y, b.w, b.h, b.last ? "last" : "");
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
    container.append(box);
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

function fillOpponents() {
  const count = Number(document.getElementById("players").value);
  const mine = Number(document.getElementById("seat").value);
  const box = document.getElementById("opponents");
  box.replaceChildren();
  for (let s = 0; s < count; s++) {
    if (s === mine) continue;
    const select = el("select", { class: "opponent", "data-seat": s });
    const bots = el("optgroup", { label: "bots" });
    options.bots.forEach((name) => bots.append(el("option", { value: name }, name)));
    select.append(bots);
    if (options.checkpoints.length) {
      const nets = el("optgroup", { label: "trained agents" });
      options.checkpoints.forEach((name) => nets.append(el("option", { value: name }, name)));
      select.append(nets);
    }
    select.value = "strong";
    const label = el("label", {}, `Seat ${s}`);
    label.append(select);
    box.append(label);
  }
}

async function newGame(event) {
  event.preventDefault();
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

function drawPlay() {
  document.getElementById("play-board").hidden = false;
  describeStatus(play, "play-scores", "play-turn", play.you);
  drawSeats(document.getElementById("play-seats"), play, play.you);
  drawTable(document.getElementById("play-table"), play.table);
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

function chooseTile(name) {
  if (busy) return;
  const moves = play.legal.filter((m) => m.tile === name);
  if (moves.length === 1) return sendMove(moves[0].action);
  document.querySelectorAll("#play-hand svg.tile").forEach((t) => t.classList.toggle("chosen", t.dataset.tile === name));
  const choice = document.getElementById("end-choice");
  choice.replaceChildren(el("span", {}, `Play ${name} on:`));
  for (const move of moves) {
    const button = el("button", { type: "button", "data-end": move.end }, `${move.end} (${play.ends[move.end]})`);
    button.addEventListener("click", () => sendMove(move.action));
    choice.append(button);
  }
  choice.hidden = false;
  choice.querySelector("button").focus();
}

// Every play request goes through here: one at a time, then the opponents' moves.
async function playRequest(path, body = undefined) {
  if (busy) return;
  busy = true;
  setPlayState();
  try {
    showError(null);
    if (path) {
      play = await api("POST", path, body);
      drawPlay();
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

// After a reload: the game in progress, if any, with the settings it was started with.
async function resumePlay() {
  let view;
  try {
    view = await api("GET", "/api/play");
  } catch (error) {
    if (document.body.dataset.play === "ended") showError(error.message);
    return;
  }
  const settings = view.settings;
  document.getElementById("preset").value = settings.preset;
  fillPlayers();
  document.getElementById("players").value = String(settings.players);
  fillSeats();
  document.getElementById("seat").value = String(settings.seat);
  fillOpponents();
  document.querySelectorAll("select.opponent").forEach((select, i) => { select.value = settings.opponents[i] ?? "random"; });
  document.getElementById("seed").value = settings.seed ?? "";
  play = view;
  drawPlay();
  await playRequest(null);
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
    ...options.checkpoints.map((name) => el("option", { value: name }, name)));
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
  drawTable(document.getElementById("watch-table"), watch.table);
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
  try {
    options = await api("GET", "/api/options");
  } catch (error) {
    showError(error.message);
    return;
  }
  fillPlayForm();
  await resumePlay();
  const saved = document.getElementById("saved-games");
  saved.replaceChildren(...options.games.map((name) => el("option", { value: name }, name)));
  saved.disabled = !options.games.length;
  document.getElementById("load-saved").disabled = !options.games.length;
}

start();
