/* clusterscout: progressive enhancement only; every page works without this file. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // While htmx fetches new results, mark the region busy for assistive technology.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var results = document.getElementById("results");
    if (results && event.detail.elt && event.detail.elt.id === "filters") {
      results.setAttribute("aria-busy", "true");
      results.classList.add("loading");
    }
  });

  // Phones: the filters start closed in a drawer; "Show N results" closes it again.
  var drawer = document.getElementById("drawer");
  var narrow = window.matchMedia("(max-width: 600px)");
  if (drawer && narrow.matches) {
    drawer.open = false;
  }
  document.addEventListener("click", function (event) {
    var show = event.target.closest && event.target.closest("#show-results");
    var results = document.getElementById("results");
    if (show && drawer && results) {
      event.preventDefault();
      if (narrow.matches) {
        drawer.open = false;
      }
      results.focus();
      results.scrollIntoView();
    }
  });

  // Open the FAQ answer or guide section a URL fragment points to.
  function openTarget() {
    var id = window.location.hash.slice(1);
    var target = id ? document.getElementById(id) : null;
    if (target && target.tagName === "DETAILS") {
      target.open = true;
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();

// Plan form: show only the fields the chosen job uses (fields carry data-jobs); without
// this script every field stays visible and the server ignores what a job does not use.
(function () {
  var job = document.getElementById("pf-job");
  if (!job) return;
  function sync() {
    document.querySelectorAll(".field[data-jobs]").forEach(function (el) {
      el.hidden = el.getAttribute("data-jobs").split(" ").indexOf(job.value) < 0;
      // a hidden field is not sent, so a value typed for another job cannot be refused
      el.querySelectorAll("input, select").forEach(function (i) { i.disabled = el.hidden; });
    });
  }
  job.addEventListener("change", sync);
  sync();
})();
