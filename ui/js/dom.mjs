// dom.mjs - a tiny element builder and the page's shared floating parts (tooltip, menu).

// h("div", {class: "x", onclick: f, dataset: {testid: "y"}}, child, "text", [more])
export function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false) continue;
        if (k === "class") el.className = v;
        else if (k === "dataset") Object.assign(el.dataset, v);
        else if (k === "style" && typeof v === "object") Object.assign(el.style, v);
        else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
        else if (k in el && typeof v !== "string") el[k] = v;
        else el.setAttribute(k, v === true ? "" : v);
    }
    append(el, children);
    return el;
}

function append(el, children) {
    for (const c of children) {
        if (c === null || c === undefined || c === false) continue;
        if (Array.isArray(c)) append(el, c);
        else el.append(c instanceof Node ? c : String(c));
    }
}

// Replaces an element's children.
export function replace(el, ...children) {
    el.textContent = "";
    append(el, children);
}

let tooltipEl = null;

// Shows the tooltip near the pointer (clientX/Y) with content (a node or text); kept inside
// the window.
export function showTooltip(content, clientX, clientY) {
    if (!tooltipEl) {
        tooltipEl = h("div", { class: "tooltip", role: "tooltip" });
        document.body.append(tooltipEl);
    }
    replace(tooltipEl, content);
    tooltipEl.hidden = false;
    const r = tooltipEl.getBoundingClientRect();
    let x = clientX + 14, y = clientY + 16;
    if (x + r.width > window.innerWidth - 4) x = Math.max(4, clientX - r.width - 14);
    if (y + r.height > window.innerHeight - 4) y = Math.max(4, clientY - r.height - 12);
    tooltipEl.style.transform = `translate(${x}px, ${y}px)`;
}

export function hideTooltip() {
    if (tooltipEl) tooltipEl.hidden = true;
}

let menuEl = null, menuClose = null;

// A context menu at clientX/Y: items are {label, action, title} or "-" for a separator.
export function showMenu(items, clientX, clientY) {
    hideMenu();
    hideTooltip();
    menuEl = h("div", { class: "menu", role: "menu", dataset: { testid: "context-menu" } },
        items.map((it) => it === "-" ? h("hr") : h("button", {
            type: "button", role: "menuitem", title: it.title || null,
            onclick: () => { hideMenu(); it.action(); },
        }, it.label)));
    document.body.append(menuEl);
    const r = menuEl.getBoundingClientRect();
    const x = Math.min(clientX, window.innerWidth - r.width - 4);
    const y = Math.min(clientY, window.innerHeight - r.height - 4);
    menuEl.style.transform = `translate(${Math.max(4, x)}px, ${Math.max(4, y)}px)`;
    menuEl.querySelector("button")?.focus();
    const onDown = (e) => { if (!menuEl?.contains(e.target)) hideMenu(); };
    const onKey = (e) => {
        if (e.key === "Escape") {
            e.stopImmediatePropagation();
            hideMenu();
        }
        if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            const bs = [...menuEl.querySelectorAll("button")];
            const i = bs.indexOf(document.activeElement);
            bs[(i + (e.key === "ArrowDown" ? 1 : bs.length - 1)) % bs.length].focus();
            e.preventDefault();
        }
    };
    setTimeout(() => {
        document.addEventListener("mousedown", onDown, true);
        document.addEventListener("keydown", onKey, true);
        window.addEventListener("blur", hideMenu);
    });
    menuClose = () => {
        document.removeEventListener("mousedown", onDown, true);
        document.removeEventListener("keydown", onKey, true);
        window.removeEventListener("blur", hideMenu);
    };
}

export function hideMenu() {
    if (menuClose) menuClose();
    menuClose = null;
    if (menuEl) menuEl.remove();
    menuEl = null;
}

// Copies text to the clipboard (the async API where allowed, else a selection).
export async function copyText(text) {
    try {
        await navigator.clipboard.writeText(text);
        return true;
    } catch {
        const ta = h("textarea", { style: { position: "fixed", opacity: "0" } });
        ta.value = text;
        document.body.append(ta);
        ta.select();
        let ok = false;
        try {
            ok = document.execCommand("copy");
        } catch { /* nothing more to try */ }
        ta.remove();
        return ok;
    }
}
