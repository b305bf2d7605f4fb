package grounding

// moreMonthNames are each month's names in French, Spanish, Italian,
// Czech (nominative and genitive), Russian and Ukrainian (nominative and
// genitive) and Estonian (nominative, genitive and terminative: "kuni 31.
// detsembrini"), lower-cased, with the forms without diacritics mail
// writes. They read as monthNames' full names do (a month's name beside a
// day or a year); the data is here, the patterns know no language.
var moreMonthNames = [12][]string{
	{"janvier", "enero", "gennaio", "leden", "ledna", "январь", "января", "січень", "січня", "jaanuar", "jaanuari", "jaanuarini"},
	{"février", "fevrier", "febrero", "febbraio", "únor", "února", "unor", "unora", "февраль", "февраля", "лютий", "лютого",
		"veebruar", "veebruari", "veebruarini"},
	{"mars", "marzo", "březen", "března", "brezen", "brezna", "март", "марта", "березень", "березня", "märts", "märtsi", "märtsini"},
	{"avril", "abril", "aprile", "duben", "dubna", "апрель", "апреля", "квітень", "квітня", "aprill", "aprilli", "aprillini"},
	{"mayo", "maggio", "květen", "května", "kveten", "kvetna", "май", "мая", "травень", "травня", "maini"},
	{"juin", "junio", "giugno", "červen", "června", "cerven", "cervna", "июнь", "июня", "червень", "червня", "juuni", "juunini"},
	{"juillet", "julio", "luglio", "červenec", "července", "cervenec", "cervence", "июль", "июля", "липень", "липня", "juuli", "juulini"},
	{"août", "aout", "agosto", "srpen", "srpna", "август", "августа", "серпень", "серпня", "augusti", "augustini"},
	{"septembre", "septiembre", "setiembre", "settembre", "září", "zari", "сентябрь", "сентября", "вересень", "вересня",
		"septembri", "septembrini"},
	{"octobre", "octubre", "ottobre", "říjen", "října", "rijen", "rijna", "октябрь", "октября", "жовтень", "жовтня",
		"oktoober", "oktoobri", "oktoobrini"},
	{"novembre", "noviembre", "listopadu", "ноябрь", "ноября", "листопад", "листопада", "novembri", "novembrini"},
	{"décembre", "decembre", "diciembre", "dicembre", "prosinec", "prosince", "декабрь", "декабря", "грудень", "грудня",
		"detsember", "detsembri", "detsembrini"},
}
