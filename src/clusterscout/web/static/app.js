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
