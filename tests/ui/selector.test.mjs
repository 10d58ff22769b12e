// selector.test.mjs - autocompletion contexts in label selectors, applying completions,
// quoting, the regexes of pprof's filters, the service a selector is about.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
    addAlternative, applyCompletion, completionContext, exactName, exactRegex, filterCompletions,
    quoteValue, serviceOf, serviceSelector, withMatcher,
} from "../../ui/js/selector.mjs";

// "|" marks the cursor
function ctx(s) {
    const pos = s.indexOf("|");
    return completionContext(s.slice(0, pos) + s.slice(pos + 1), pos);
}

test("label names after '{' and ','", () => {
    assert.deepEqual(ctx("{|}"), { kind: "name", prefix: "", start: 1, end: 1, wrap: false });
    assert.deepEqual(ctx("{serv|}"), { kind: "name", prefix: "serv", start: 1, end: 5, wrap: false });
    assert.deepEqual(ctx("{se|rvice}"), { kind: "name", prefix: "se", start: 1, end: 8, wrap: false });
    assert.deepEqual(ctx('{a="1", |}'), { kind: "name", prefix: "", start: 8, end: 8, wrap: false });
    assert.deepEqual(ctx('{a="1",en|}'), { kind: "name", prefix: "en", start: 7, end: 9, wrap: false });
});

test("values after an operator, inside or before quotes", () => {
    assert.deepEqual(ctx('{env=|}'), { kind: "value", label: "env", prefix: "", start: 5, end: 5 });
    assert.deepEqual(ctx('{env="pr|"}'), { kind: "value", label: "env", prefix: "pr", start: 5, end: 9 });
    assert.deepEqual(ctx('{env=~"pr|od"}'), { kind: "value", label: "env", prefix: "pr", start: 6, end: 12 });
    assert.deepEqual(ctx('{env!="|"}'), { kind: "value", label: "env", prefix: "", start: 6, end: 8 });
    assert.deepEqual(ctx('{env = "a\\"|'), { kind: "value", label: "env", prefix: 'a"', start: 7, end: 11 });
    assert.deepEqual(ctx('{a="1", pod="|'), { kind: "value", label: "pod", prefix: "", start: 12, end: 13 });
    assert.deepEqual(ctx('{env=|"prod"}'), { kind: "value", label: "env", prefix: "", start: 5, end: 11 });
});

test("no completion where none fits", () => {
    assert.equal(ctx('{env="prod"|}'), null);
    assert.equal(ctx('{env="prod"}|'), null);
    assert.equal(ctx('{env |}'), null);
    assert.equal(ctx('{1+|}'), null);
});

test("a bare word completes a label name and gets braces", () => {
    assert.deepEqual(ctx("|"), { kind: "name", prefix: "", start: 0, end: 0, wrap: true });
    assert.deepEqual(ctx("serv|"), { kind: "name", prefix: "serv", start: 0, end: 4, wrap: true });
    const r = applyCompletion("serv", ctx("serv|"), "service_name");
    assert.deepEqual(r, { text: '{service_name=""}', cursor: 15, then: "value" });
});

test("applying completions", () => {
    let r = applyCompletion("{}", ctx("{|}"), "env");
    assert.deepEqual(r, { text: '{env=""}', cursor: 6, then: "value" });
    // then the value, inside the quotes
    r = applyCompletion(r.text, completionContext(r.text, r.cursor), "prod");
    assert.deepEqual(r, { text: '{env="prod"}', cursor: 11, then: null });
    // replacing a value with quotes to escape
    r = applyCompletion('{env="x", b="1"}', ctx('{env="|x", b="1"}'), 'a"b\\c');
    assert.equal(r.text, '{env="a\\"b\\\\c", b="1"}');
    // a name before an existing operator is replaced alone
    r = applyCompletion('{se="1"}', ctx('{se|="1"}'), "service_name");
    assert.deepEqual(r, { text: '{service_name="1"}', cursor: 13, then: null });
    // so does a name typed without the closing brace
    r = applyCompletion("{serv", ctx("{serv|"), "service_name");
    assert.deepEqual(r, { text: '{service_name=""}', cursor: 15, then: "value" });
    // a value without a closing brace gets one
    r = applyCompletion('{env=', ctx('{env=|'), "prod");
    assert.equal(r.text, '{env="prod"}');
});

test("filtering candidates: prefix matches first, then substrings", () => {
    const items = ["service_name", "env", "instance", "job", "span_name", "NAME"];
    assert.deepEqual(filterCompletions(items, "na"), ["NAME", "service_name", "span_name"]);
    assert.deepEqual(filterCompletions(items, ""), items);
    assert.deepEqual(filterCompletions(items, "", 2), ["service_name", "env"]);
});

test("quoting, matchers, exact regexes", () => {
    assert.equal(quoteValue('a"b\\'), '"a\\"b\\\\"');
    assert.equal(withMatcher("", "env", "prod"), '{env="prod"}');
    assert.equal(withMatcher('{a="1"}', "env", "prod"), '{a="1", env="prod"}');
    assert.equal(withMatcher('{env="x", a="1"}', "env", "prod"), '{env="prod", a="1"}');
    assert.equal(exactRegex("net/http.(*conn).serve"), "^net/http\\.\\(\\*conn\\)\\.serve$");
    assert.ok(new RegExp(exactRegex("a.b[c]{1}|x")).test("a.b[c]{1}|x"));
    assert.ok(!new RegExp(exactRegex("a.b")).test("axb"));
    for (const name of ["main.burn", "net/http.(*conn).serve", "a+b?c^$", "[kernel.kallsyms]"])
        assert.equal(exactName(exactRegex(name)), name);
    assert.equal(exactName("main"), "");
    assert.equal(exactName("^a.b$"), "");
    assert.equal(addAlternative("", "^a$"), "^a$");
    assert.equal(addAlternative("^a$", "^b$"), "^a$|^b$");
    assert.equal(addAlternative("^a$|^b$", "^b$"), "^a$|^b$");
});

test("the service of a selector: one service_name=\"...\" matcher, else none", () => {
    assert.equal(serviceOf('{service_name="api"}'), "api");
    assert.equal(serviceOf('{env="prod", service_name="a\\"b"}'), 'a"b');
    for (const q of ["", "{}", '{env="prod"}', '{service_name=~"api|db"}', '{service_name!="api"}',
                     '{service_name="a", service_name="b"}', "{service_name="])
        assert.equal(serviceOf(q), "", q);
    assert.equal(serviceSelector('a"b'), '{service_name="a\\"b"}');
    assert.equal(serviceOf(serviceSelector("x.y-z")), "x.y-z");
});
